# Linear layer, BatchNorm1d over the batch (training statistics), then Tanh.
import torch
import torch.nn as nn

batch_size = 128
in_features = 2048
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)

    def forward(self, x):
        return torch.tanh(self.bn(self.fc(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
