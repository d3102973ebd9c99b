# GEMM, max over the feature dimension, subtract the row mean, then GELU.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
seq_len = 64
in_features = 1024
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.fc(x)
        x = torch.max(x, dim=1, keepdim=True).values
        x = x - x.mean(dim=-1, keepdim=True)
        return F.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, in_features)]


def get_init_inputs():
    return [in_features, out_features]
