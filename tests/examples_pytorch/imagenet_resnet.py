"""The ImageNet training loop, from https://github.com/pytorch/examples/tree/main/imagenet
(main.py's train, validate, accuracy, AverageMeter, ProgressMeter, Summary, and
main_worker's criterion, SGD and StepLR) with its --dummy data. BSD 3-Clause License,
Copyright (c) 2017, Pytorch contributors: see LICENSE-pytorch-examples. Changes: a
narrow ResNet-18 (resnet_torchvision_layout.py, widths 64-8-16-16) on 32x32 images;
FakeData below stands in for torchvision's (its per-index seeding; images in float64,
as the model: BatchNorm in eval mode after a few steps amplifies float32 rounding);
no distributed or accelerator branches; 2 epochs of 4 batches of 4; the training
losses and validation figures are collected."""
import time
from enum import Enum

import dispatchtorch as torch
import dispatchtorch.nn as nn
from dispatchtorch.optim.lr_scheduler import StepLR
from runner import load

models = load("resnet_torchvision_layout", torch.__name__)
LOSSES = []


class FakeData(torch.utils.data.Dataset):
    """torchvision.datasets.FakeData's draws: image and target from a per-index seed,
    the global generator's state restored after."""

    def __init__(self, size, image_size, num_classes, random_offset=0):
        self.size, self.image_size, self.num_classes = size, image_size, num_classes
        self.random_offset = random_offset

    def __getitem__(self, index):
        rng_state = torch.get_rng_state()
        torch.manual_seed(index + self.random_offset)
        img = torch.randn(*self.image_size, dtype=torch.float64)
        target = torch.randint(0, self.num_classes, size=(1,), dtype=torch.long)[0]
        torch.set_rng_state(rng_state)
        return img, target

    def __len__(self):
        return self.size


def train(train_loader, model, criterion, optimizer, epoch, device, args):

    use_accel = False

    batch_time = AverageMeter('Time', use_accel, ':6.3f', Summary.NONE)
    data_time = AverageMeter('Data', use_accel, ':6.3f', Summary.NONE)
    losses = AverageMeter('Loss', use_accel, ':.4e', Summary.NONE)
    top1 = AverageMeter('Acc@1', use_accel, ':6.2f', Summary.NONE)
    top5 = AverageMeter('Acc@5', use_accel, ':6.2f', Summary.NONE)
    progress = ProgressMeter(
        len(train_loader),
        [batch_time, data_time, losses, top1, top5],
        prefix="Epoch: [{}]".format(epoch))

    # switch to train mode
    model.train()

    end = time.time()
    for i, (images, target) in enumerate(train_loader):
        # measure data loading time
        data_time.update(time.time() - end)

        # move data to the same device as model
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)

        # compute output
        output = model(images)
        loss = criterion(output, target)

        # measure accuracy and record loss
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        losses.update(loss.item(), images.size(0))
        top1.update(acc1[0], images.size(0))
        top5.update(acc5[0], images.size(0))
        LOSSES.append(loss.item())

        # compute gradient and do SGD step
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        # measure elapsed time
        batch_time.update(time.time() - end)
        end = time.time()

        if i % args.print_freq == 0:
            progress.display(i + 1)


def validate(val_loader, model, criterion, args):

    def run_validate(loader, base_progress=0):
        with torch.no_grad():
            end = time.time()
            for i, (images, target) in enumerate(loader):
                i = base_progress + i

                # compute output
                output = model(images)
                loss = criterion(output, target)

                # measure accuracy and record loss
                acc1, acc5 = accuracy(output, target, topk=(1, 5))
                losses.update(loss.item(), images.size(0))
                top1.update(acc1[0], images.size(0))
                top5.update(acc5[0], images.size(0))

                # measure elapsed time
                batch_time.update(time.time() - end)
                end = time.time()

                if i % args.print_freq == 0:
                    progress.display(i + 1)

    batch_time = AverageMeter('Time', False, ':6.3f', Summary.NONE)
    losses = AverageMeter('Loss', False, ':.4e', Summary.NONE)
    top1 = AverageMeter('Acc@1', False, ':6.2f', Summary.AVERAGE)
    top5 = AverageMeter('Acc@5', False, ':6.2f', Summary.AVERAGE)
    progress = ProgressMeter(
        len(val_loader),
        [batch_time, losses, top1, top5],
        prefix='Test: ')

    # switch to evaluate mode
    model.eval()

    run_validate(val_loader)

    progress.display_summary()
    LOSSES.append(losses.avg)

    return top1.avg


class Summary(Enum):
    NONE = 0
    AVERAGE = 1
    SUM = 2
    COUNT = 3

class AverageMeter(object):
    """Computes and stores the average and current value"""
    def __init__(self, name, use_accel, fmt=':f', summary_type=Summary.AVERAGE):
        self.name = name
        self.use_accel = use_accel
        self.fmt = fmt
        self.summary_type = summary_type
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        fmtstr = '{name} {val' + self.fmt + '} ({avg' + self.fmt + '})'
        return fmtstr.format(**self.__dict__)

    def summary(self):
        fmtstr = ''
        if self.summary_type is Summary.NONE:
            fmtstr = ''
        elif self.summary_type is Summary.AVERAGE:
            fmtstr = '{name} {avg:.3f}'
        elif self.summary_type is Summary.SUM:
            fmtstr = '{name} {sum:.3f}'
        elif self.summary_type is Summary.COUNT:
            fmtstr = '{name} {count:.3f}'
        else:
            raise ValueError('invalid summary type %r' % self.summary_type)

        return fmtstr.format(**self.__dict__)


class ProgressMeter(object):
    def __init__(self, num_batches, meters, prefix=""):
        self.batch_fmtstr = self._get_batch_fmtstr(num_batches)
        self.meters = meters
        self.prefix = prefix

    def display(self, batch):
        entries = [self.prefix + self.batch_fmtstr.format(batch)]
        entries += [str(meter) for meter in self.meters]
        print('\t'.join(entries))

    def display_summary(self):
        entries = [" *"]
        entries += [meter.summary() for meter in self.meters]
        print(' '.join(entries))

    def _get_batch_fmtstr(self, num_batches):
        num_digits = len(str(num_batches // 1))
        fmt = '{:' + str(num_digits) + 'd}'
        return '[' + fmt + '/' + fmt.format(num_batches) + ']'

def accuracy(output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions for the specified values of k"""
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)

        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))

        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


def run(epochs=2):
    del LOSSES[:]
    args = type("Args", (), {"print_freq": 1})()
    torch.manual_seed(0)
    device = torch.device("cpu")
    model = models.resnet18(widths=(64, 8, 16, 16), num_classes=10).to(device).double()
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
    scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
    train_loader = torch.utils.data.DataLoader(FakeData(16, (3, 32, 32), 10), batch_size=4,
                                               shuffle=True, num_workers=0, pin_memory=True)
    val_loader = torch.utils.data.DataLoader(FakeData(8, (3, 32, 32), 10, random_offset=100),
                                             batch_size=4, shuffle=False, num_workers=0)
    top1 = []
    for epoch in range(epochs):
        train(train_loader, model, criterion, optimizer, epoch, device, args)
        top1.append(float(validate(val_loader, model, criterion, args)))
        scheduler.step()
    return LOSSES + top1
