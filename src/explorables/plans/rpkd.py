"""Plan of rpkd's ``paper`` preset: the teacher's training loop and the students' (every arm x seed)."""

from __future__ import annotations

import torch

from ..core.plan import Part, dry_note, parameter_count
from ..rpkd.experiment import labelled_count, load_task
from ..rpkd.losses import RandomPrototypes
from ..rpkd.models import make_student, make_teacher
from ..rpkd.training import accuracy, teacher_targets, train_students, train_teachers

#: images of CIFAR-100's first ten fine classes (train and test), what the loader keeps at n_fine=10
CIFAR_IMAGES = 6000


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    if cfg.data_root:
        task = load_task(cfg)
        images, fine = task.images, task.fine
        data = f"{cfg.dataset} from {cfg.data_root}"
    else:  # synthetic batches of the loader's shapes
        g = torch.Generator().manual_seed(0)
        images = torch.rand(CIFAR_IMAGES, 1, cfg.image_size, cfg.image_size, generator=g)
        fine = torch.randint(10, (CIFAR_IMAGES,), generator=g)
        data = f"synthetic images of the loader's shape ({CIFAR_IMAGES} x 1 x {cfg.image_size}^2)"
    n_train = len(fine) - cfg.n_test
    x = images[:n_train]
    n_classes = max(cfg.class_grid)
    labels = fine[:n_train] % n_classes
    n_seeds, n_arms = len(cfg.seeds), len(cfg.arms)
    batch = 8 if dry else cfg.batch_size  # dry: the models at full size, a small batch

    def teacher_step():
        return train_teachers(x[None], labels[None], n_classes, width=cfg.teacher_width, n_steps=1,
                              batch_size=batch, lr=cfg.lr, seed=cfg.seed, device="cpu")

    teacher = make_teacher(1, n_classes, cfg.teacher_width, cfg.seed)
    with torch.no_grad():
        _, features, _ = teacher(x[None, :8])
    d_teacher = features.shape[1]
    prototypes = RandomPrototypes(cfg.n_prototypes, cfg.d_prototype, d_teacher, cfg.seed + 7)
    t_logits = torch.randn(n_seeds, n_train, n_classes)
    t_tokens = torch.randn(n_seeds, n_train, cfg.grid**2, d_teacher)
    n_labelled = labelled_count(cfg, n_train)
    student_labels = (labels[None].expand(n_seeds, -1)).clone()
    student_labels[:, n_labelled:] = -1

    def student_step():
        return train_students(cfg.student, cfg.arms, x[None].expand(n_seeds, -1, -1, -1, -1).contiguous(),
                              student_labels, t_logits, t_tokens, prototypes, cfg.weights(), width=cfg.student_width,
                              grid=cfg.grid, n_steps=1, batch_size=batch, lr=cfg.lr,
                              temperature=cfg.temperature, tau=cfg.tau, ofa_eps=cfg.ofa_eps, seed=cfg.seed,
                              device="cpu")

    student = make_student(cfg.student, n_arms * n_seeds, n_classes, cfg.student_width, cfg.seed, cfg.image_size)
    n_grid = len(cfg.class_grid)
    x_test = images[n_train:]
    y_test = fine[n_train:] % n_classes

    # alive on the device in student_part while the accuracy runs: the training images (shared, and reordered per
    # seed), the teacher's logits and tokens (shared, and reordered per seed)
    student_data = (1 + n_seeds) * x.nbytes + (1 / n_seeds + 1) * (t_tokens.nbytes + t_logits.nbytes)
    student_data = int(student_data)

    def targets_step():  # the teacher's logits and tokens on every training image, one pass (no gradient)
        return teacher_targets(teacher, x[None], cfg.grid)

    def accuracy_step():  # the students' test accuracy: one forward pass over every arm x seed, autograd on
        return accuracy(student, x_test[None].expand(n_seeds, *x_test.shape), y_test[None].expand(n_seeds, -1),
                        n_arms)
    found = [
        Part("teacher", f"one Adam step of the CNN teacher on {cfg.batch_size} images", teacher_step,
             steps=cfg.n_teacher_steps * n_grid, parameters=parameter_count(teacher),
             note=f"{n_grid} class counts; {data}"),
        Part("students", f"one Adam step of {n_arms} arms x {n_seeds} seeds ({cfg.student}) on {cfg.batch_size} "
             "images", student_step, steps=cfg.n_student_steps * n_grid,
             parameters=parameter_count(student), note="the students' own parameters"),
        Part("teacher targets", f"the teacher's logits and tokens on all {n_train:,} training images at once",
             targets_step, steps=n_grid, parameters=parameter_count(teacher),
             note=f"teacher_targets after each teacher ({n_grid} class counts), no gradient"),
        Part("student accuracy", f"every student's test accuracy on {len(y_test):,} images in one pass", accuracy_step,
             steps=n_grid, parameters=parameter_count(student), resident_bytes=student_data,
             note="training.accuracy: the test images repeated over the arms, one forward pass with autograd on; "
             f"resident: student_part's data on the device ({student_data / 1e9:.3g} GB: the training images and "
             "the teacher's targets, per seed and shared)"),
    ]
    paper_scale = ("no: CIFAR-100's first ten fine classes, grey-scaled to 16 pixels, with a 64-wide CNN teacher; "
                   "the paper distils ResNet/ViT teachers on full CIFAR-100 and ImageNet-100 at full resolution")
    dry_note(found, dry, f"batches of {batch}")
    return found, paper_scale, "the wall time of a step includes building the models and the optimiser (steps=1 calls)"
