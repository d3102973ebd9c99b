# Bilinear form via a three-operand einsum ("bi,oij,bj->bo"), plus bias, then softmax.
import torch
import torch.nn as nn

batch_size = 128
in1_features = 512
in2_features = 512
out_features = 256


class Model(nn.Module):
    def __init__(self, in1_features, in2_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in1_features, in2_features) * 0.01)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x1, x2):
        y = torch.einsum("bi,oij,bj->bo", x1, self.weight, x2) + self.bias
        return torch.softmax(y, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, in1_features), torch.randn(batch_size, in2_features)]


def get_init_inputs():
    return [in1_features, in2_features, out_features]
