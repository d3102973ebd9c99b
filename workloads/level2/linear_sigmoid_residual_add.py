# Linear layer with a sigmoid gate multiplied into the input, plus a residual add.
import torch
import torch.nn as nn

batch_size = 64
seq_len = 256
hidden_size = 2048


class Model(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.fc = nn.Linear(hidden_size, hidden_size)

    def forward(self, x):
        gate = torch.sigmoid(self.fc(x))
        return x + gate * x


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size)]


def get_init_inputs():
    return [hidden_size]
