# Siamese network: a shared CNN embedding tower applied to two images, L2-normalised embeddings,
# cosine similarity and a contrastive loss against binary same/different labels.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 3
image_size = 112
embed_dim = 512
margin = 1.0


class Model(nn.Module):
    def __init__(self, in_channels, embed_dim, margin):
        super().__init__()
        self.margin = margin
        self.tower = nn.Sequential(
            nn.Conv2d(in_channels, 64, 3, stride=2, padding=1),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.Conv2d(64, 128, 3, stride=2, padding=1),
            nn.BatchNorm2d(128),
            nn.ReLU(inplace=True),
            nn.Conv2d(128, 256, 3, stride=2, padding=1),
            nn.BatchNorm2d(256),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(256, embed_dim),
        )

    def forward(self, x1, x2, same):
        e1 = F.normalize(self.tower(x1), dim=1)
        e2 = F.normalize(self.tower(x2), dim=1)
        sim = F.cosine_similarity(e1, e2, dim=1)
        dist = torch.norm(e1 - e2, p=2, dim=1)
        label = same.float()
        loss = label * dist.pow(2) + (1.0 - label) * torch.clamp(self.margin - dist, min=0.0).pow(2)
        return sim, loss.mean()


def get_inputs():
    x1 = torch.rand(batch_size, in_channels, image_size, image_size)
    x2 = torch.rand(batch_size, in_channels, image_size, image_size)
    same = torch.rand(batch_size) > 0.5
    return [x1, x2, same]


def get_init_inputs():
    return [in_channels, embed_dim, margin]
