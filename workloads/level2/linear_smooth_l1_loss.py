# Regression head: two Linear layers with ReLU, then Huber (smooth L1) loss against a target.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_features = 4096
hidden_size = 2048
out_features = 512


class Model(nn.Module):
    def __init__(self, in_features, hidden_size, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_size)
        self.fc2 = nn.Linear(hidden_size, out_features)

    def forward(self, x, target):
        pred = self.fc2(F.relu(self.fc1(x)))
        return F.smooth_l1_loss(pred, target, beta=1.0)


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randn(batch_size, out_features)]


def get_init_inputs():
    return [in_features, hidden_size, out_features]
