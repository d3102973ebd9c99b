# Huber / smooth L1 loss via F.smooth_l1_loss (beta 1.0).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 32768


class Model(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, predictions, targets):
        return F.smooth_l1_loss(predictions, targets, beta=self.beta)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [1.0]
