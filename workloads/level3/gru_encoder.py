# Bidirectional single-layer batch-first nn.GRU encoder; returns the output sequence and final state.
import torch
import torch.nn as nn

batch_size = 32
seq_len = 512
input_size = 768
hidden_size = 768


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers=1, batch_first=True, bidirectional=True)

    def forward(self, x, h0):
        out, hn = self.gru(x, h0)
        return out, hn


def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size), torch.randn(2, batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size]
