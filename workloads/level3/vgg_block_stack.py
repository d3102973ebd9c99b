# VGG-style network: five stages of (3x3 conv + ReLU) x n followed by 2x2 max-pool, then an MLP head.
import torch
import torch.nn as nn

batch_size = 16
image_size = 224
stage_channels = [64, 128, 256, 512, 512]
stage_depths = [2, 2, 3, 3, 3]
num_classes = 1000


class Model(nn.Module):
    def __init__(self, stage_channels, stage_depths, num_classes):
        super().__init__()
        layers = []
        in_ch = 3
        for out_ch, depth in zip(stage_channels, stage_depths):
            for _ in range(depth):
                layers.append(nn.Conv2d(in_ch, out_ch, kernel_size=3, padding=1))
                layers.append(nn.ReLU(inplace=True))
                in_ch = out_ch
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        self.features = nn.Sequential(*layers)
        spatial = image_size // (2 ** len(stage_channels))
        self.classifier = nn.Sequential(
            nn.Linear(in_ch * spatial * spatial, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(0.5),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(0.5),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


def get_inputs():
    return [torch.rand(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [stage_channels, stage_depths, num_classes]
