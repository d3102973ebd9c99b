# GEMM followed by Swish (x * sigmoid(x), written out) and a sum over the feature dimension.
import torch
import torch.nn as nn

batch_size = 128
in_features = 4096
out_features = 2048


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.fc(x)
        x = x * torch.sigmoid(x)
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
