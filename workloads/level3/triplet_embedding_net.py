# Metric-learning embedding MLP shared across anchor/positive/negative inputs, trained with the
# triplet margin loss plus a cosine embedding term.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
input_dim = 2048
hidden_dim = 1024
embed_dim = 256
margin = 0.5


class Model(nn.Module):
    def __init__(self, input_dim, hidden_dim, embed_dim, margin):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(input_dim, hidden_dim),
            nn.BatchNorm1d(hidden_dim),
            nn.ReLU(),
            nn.Linear(hidden_dim, hidden_dim),
            nn.ReLU(),
            nn.Linear(hidden_dim, embed_dim),
        )
        self.loss = nn.TripletMarginLoss(margin=margin, p=2.0)

    def forward(self, anchor, positive, negative):
        a = self.net(anchor)
        p = self.net(positive)
        n = self.net(negative)
        cos = 1.0 - F.cosine_similarity(a, p, dim=1).mean()
        return self.loss(a, p, n) + 0.1 * cos


def get_inputs():
    return [
        torch.randn(batch_size, input_dim),
        torch.randn(batch_size, input_dim),
        torch.randn(batch_size, input_dim),
    ]


def get_init_inputs():
    return [input_dim, hidden_dim, embed_dim, margin]
