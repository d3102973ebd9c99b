# GEMM with an explicit bias parameter, ReLU, then (live) dropout.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_features = 4096
out_features = 4096
dropout_p = 0.1


class Model(nn.Module):
    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.02)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.02)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x):
        y = torch.matmul(x, self.weight.t()) + self.bias
        y = torch.relu(y)
        return self.dropout(y)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
