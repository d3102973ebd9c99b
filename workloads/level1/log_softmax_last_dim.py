# Log-softmax over the last dimension (vocabulary) of [batch, seq, vocab] logits.
import torch
import torch.nn as nn

batch_size = 8
seq_len = 1024
vocab_size = 32000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, seq_len, vocab_size)]


def get_init_inputs():
    return []
