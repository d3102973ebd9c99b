# Token embedding lookup nn.Embedding(vocab 50304, dim 4096) on int64 token ids.
import torch
import torch.nn as nn

batch_size = 32
seq_len = 2048
vocab_size = 50304
embed_dim = 4096


class Model(nn.Module):
    def __init__(self, vocab_size, embed_dim):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)

    def forward(self, tokens):
        return self.embed(tokens)


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, embed_dim]
