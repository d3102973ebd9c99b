# Cross-entropy loss over language-model logits with integer class targets (nn.CrossEntropyLoss).
import torch
import torch.nn as nn

batch_size = 8192
num_classes = 32000


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.CrossEntropyLoss()

    def forward(self, logits, targets):
        return self.loss(logits, targets)


def get_inputs():
    logits = torch.randn(batch_size, num_classes)
    targets = torch.randint(0, num_classes, (batch_size,))
    return [logits, targets]


def get_init_inputs():
    return []
