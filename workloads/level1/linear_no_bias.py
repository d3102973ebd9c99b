# Bias-free projection nn.Linear(d_model, d_ff, bias=False) over a [batch, seq, d_model] activation.
import torch
import torch.nn as nn

batch_size = 16
seq_len = 1024
d_model = 4096
d_ff = 11008


class Model(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.proj = nn.Linear(d_model, d_ff, bias=False)

    def forward(self, x):
        return self.proj(x)


def get_inputs():
    return [torch.rand(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, d_ff]
