# Classifier head: Linear to logits, then cross-entropy loss against integer targets.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_features = 2048
num_classes = 32000


class Model(nn.Module):
    def __init__(self, in_features, num_classes):
        super().__init__()
        self.fc = nn.Linear(in_features, num_classes, bias=False)

    def forward(self, x, targets):
        logits = self.fc(x)
        return F.cross_entropy(logits, targets)


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return [in_features, num_classes]
