# GEMM, logsumexp over features (keepdim), LeakyReLU twice, then GELU twice.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.fc(x)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = F.leaky_relu(x, negative_slope=0.01)
        x = F.leaky_relu(x, negative_slope=0.01)
        x = F.gelu(x)
        return F.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
