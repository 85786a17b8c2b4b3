"""add_embedding's files, as PyTorch writes them for TensorBoard's projector:
log_dir/<step:05d>/<tag>/tensors.tsv (+ metadata.tsv, sprite.png) and one
log_dir/projector_config.pbtxt listing every embedding the writer added."""
from __future__ import annotations

import math
import os

import numpy as np
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

from ._images import make_grid
from ._convert import to_numpy


def encode_tag(tag):
    """The tag as one directory name: %, / and \\ percent-encoded."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def make_tsv(metadata, save_path, metadata_header=None):
    if not metadata_header:
        lines = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in "
                                 "metadata")
        lines = ["\t".join(str(e) for e in row) for row in [metadata_header] + metadata]
    with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
        f.write(("\n".join(lines) + "\n").encode())


def make_sprite(label_img, save_path):
    """The images in a ceil(sqrt(N))-column grid, on a square canvas as wide as it."""
    import io

    from PIL import Image
    grid = make_grid(to_numpy(label_img), ncols=math.ceil(label_img.shape[0] ** 0.5))
    square = np.zeros((grid.shape[2], grid.shape[2], 3))
    square[:grid.shape[1]] = grid.transpose(1, 2, 0)
    with io.BytesIO() as buf:
        Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(buf, format="PNG")
        png = buf.getvalue()
    with open(os.path.join(save_path, "sprite.png"), "wb") as f:
        f.write(png)


def make_mat(mat, save_path):
    with open(os.path.join(save_path, "tensors.tsv"), "wb") as f:
        for row in mat:
            f.write(("\t".join(str(v.item()) for v in row) + "\n").encode())


def embedding_info(metadata, label_img, subdir, global_step, tag):
    info = EmbeddingInfo(tensor_name=f"{tag}:{str(global_step).zfill(5)}",
                         tensor_path=os.path.join(subdir, "tensors.tsv"))
    if metadata is not None:
        info.metadata_path = os.path.join(subdir, "metadata.tsv")
    if label_img is not None:
        info.sprite.image_path = os.path.join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
    return info


def add_embedding(writer, mat, metadata, label_img, global_step, tag, metadata_header):
    """Writes the files and rewrites the config with every embedding so far (kept on
    the writer: the file system need not append)."""
    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
    mat = to_numpy(mat)
    global_step = 0 if global_step is None else global_step
    subdir = f"{str(global_step).zfill(5)}/{encode_tag(tag)}"
    logdir = writer._get_file_writer().get_logdir()
    save_path = os.path.join(logdir, subdir)
    if os.path.isdir(save_path):
        print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
    elif os.path.exists(save_path):
        raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
    else:
        os.makedirs(save_path)
    if metadata is not None:
        if mat.shape[0] != len(metadata):
            raise AssertionError("#labels should equal with #data points")
        make_tsv(metadata, save_path, metadata_header)
    if label_img is not None:
        if mat.shape[0] != label_img.shape[0]:
            raise AssertionError("#images should equal with #data points")
        make_sprite(label_img, save_path)
    if mat.ndim != 2:
        raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
    make_mat(mat, save_path)
    if not hasattr(writer, "_projector_config"):
        writer._projector_config = ProjectorConfig()
    writer._projector_config.embeddings.extend(
        [embedding_info(metadata, label_img, subdir, global_step, tag)])
    with open(os.path.join(logdir, "projector_config.pbtxt"), "wb") as f:
        f.write(text_format.MessageToString(writer._projector_config).encode())
