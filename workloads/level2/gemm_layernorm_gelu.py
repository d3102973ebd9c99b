# Linear projection over token sequences, LayerNorm over the features, then GELU.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
seq_len = 512
in_features = 1024
out_features = 2048


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x):
        return F.gelu(self.norm(self.fc(x)))


def get_inputs():
    return [torch.randn(batch_size, seq_len, in_features)]


def get_init_inputs():
    return [in_features, out_features]
