# KL-divergence loss F.kl_div(log_probs, probs, reduction='batchmean') between two distributions.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
num_classes = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_predictions, targets):
        return F.kl_div(log_predictions, targets, reduction="batchmean")


def get_inputs():
    log_predictions = torch.randn(batch_size, num_classes).log_softmax(dim=-1)
    targets = torch.rand(batch_size, num_classes).softmax(dim=-1)
    return [log_predictions, targets]


def get_init_inputs():
    return []
