# Linear projection over a sequence, cumulative sum along the time axis, then ReLU.
import torch
import torch.nn as nn

batch_size = 32
seq_len = 2048
in_features = 1024
out_features = 1024


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.fc(x)
        x = torch.cumsum(x, dim=1)
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, in_features)]


def get_init_inputs():
    return [in_features, out_features]
