# EfficientNet MBConv blocks: 1x1 expand + BN + SiLU, depthwise 5x5 + BN + SiLU, squeeze-and-excite
# (SiLU/sigmoid), 1x1 project + BN, residual when shapes match; then head conv, pool, classifier.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
image_size = 112
num_classes = 1000
# (in_channels, out_channels, kernel, stride, expand)
blocks = [(24, 40, 5, 2, 6), (40, 40, 5, 1, 6), (40, 80, 3, 2, 6), (80, 80, 3, 1, 6)]


class MBConv(nn.Module):
    def __init__(self, in_ch, out_ch, kernel, stride, expand, se_ratio=0.25):
        super().__init__()
        hidden = in_ch * expand
        squeeze = max(1, int(in_ch * se_ratio))
        self.residual = stride == 1 and in_ch == out_ch
        self.expand = nn.Conv2d(in_ch, hidden, 1, bias=False)
        self.bn0 = nn.BatchNorm2d(hidden)
        self.dw = nn.Conv2d(hidden, hidden, kernel, stride=stride, padding=kernel // 2, groups=hidden, bias=False)
        self.bn1 = nn.BatchNorm2d(hidden)
        self.se_reduce = nn.Conv2d(hidden, squeeze, 1)
        self.se_expand = nn.Conv2d(squeeze, hidden, 1)
        self.project = nn.Conv2d(hidden, out_ch, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)

    def forward(self, x):
        h = F.silu(self.bn0(self.expand(x)))
        h = F.silu(self.bn1(self.dw(h)))
        s = F.adaptive_avg_pool2d(h, 1)
        s = torch.sigmoid(self.se_expand(F.silu(self.se_reduce(s))))
        h = self.bn2(self.project(h * s))
        if self.residual:
            h = h + x
        return h


class Model(nn.Module):
    def __init__(self, blocks, num_classes):
        super().__init__()
        self.blocks = nn.Sequential(*[MBConv(*cfg) for cfg in blocks])
        last = blocks[-1][1]
        self.head = nn.Conv2d(last, 1280, 1, bias=False)
        self.bn = nn.BatchNorm2d(1280)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(1280, num_classes)

    def forward(self, x):
        x = self.blocks(x)
        x = F.silu(self.bn(self.head(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(self.drop(x))


def get_inputs():
    return [torch.rand(batch_size, blocks[0][0], image_size, image_size)]


def get_init_inputs():
    return [blocks, num_classes]
