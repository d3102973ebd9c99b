# GEMM over tokens, dropout, mean over the sequence dimension, then softmax over features.
import torch
import torch.nn as nn

batch_size = 64
seq_len = 128
in_features = 2048
out_features = 1024
dropout_p = 0.2


class Model(nn.Module):
    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x):
        x = self.dropout(self.fc(x))
        x = x.mean(dim=1)
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, seq_len, in_features)]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
