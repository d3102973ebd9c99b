# Triplet margin loss nn.TripletMarginLoss(margin=1.0) on anchor/positive/negative embeddings.
import torch
import torch.nn as nn

batch_size = 65536
embed_dim = 4096


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor, positive, negative):
        return self.loss(anchor, positive, negative)


def get_inputs():
    anchor = torch.rand(batch_size, embed_dim)
    positive = torch.rand(batch_size, embed_dim)
    negative = torch.rand(batch_size, embed_dim)
    return [anchor, positive, negative]


def get_init_inputs():
    return [1.0]
