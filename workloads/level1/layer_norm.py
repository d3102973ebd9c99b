# Layer normalization nn.LayerNorm over the hidden dimension of [batch, seq, hidden].
import torch
import torch.nn as nn

batch_size = 32
seq_len = 2048
hidden = 4096


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
