"""The pre-softmax projection and the label-smoothed loss, fused and in row chunks."""

from keras import ops, tree


def chunked_softmax_cross_entropy(
    hidden, kernel, labels, label_smoothing=0.1, pad_id=0, chunk_size=512
):
    """Label-smoothed cross-entropy of `hidden @ kernel`, never forming all logits.

    The last step of the Transformer (§3.4: "the usual learned linear
    transformation and softmax function") followed by the label-smoothed loss
    of §5.4 is, at `base` training size (4,096 target tokens, V = 32,000), a
    `[4096, 32000]` float32 logits tensor plus its exponential and its gradient:
    1.6 GB, a large share of the step's peak memory (docs/experiment-log.md, "The
    chunked output loss against the loss on logits"). Here the rows are
    processed `chunk_size`
    at a time. For each chunk the logits, the softmax, the loss and the
    gradient with respect to the logits exist only for that chunk, and are
    turned at once into the gradients of `hidden` (this chunk's rows) and of
    `kernel` (accumulated). The backward pass then only scales these by the
    upstream gradient: the same matmul FLOPs as projection + loss + backward,
    no recomputation, and at most one chunk's `[chunk_size, V]` logits alive.

    Per real token (label != `pad_id`), with p = softmax(logits) and
    q'(k) = (1 - eps) * [k = y] + eps / V:

        loss = -sum_k q'(k) log p(k)          d loss / d logits = p - q'

    Padding rows add nothing to the loss and get zero gradient.

    The accuracy and perplexity statistics come out of the same pass:
    `negative_log_prob` is -log p(y) (unsmoothed) and `right` is 1 where the
    label's logit is the largest (ties count as right, as in
    `MaskedTokenAccuracy`); both are 0 on padding and carry no gradient.

    Args:
        hidden: float tensor `[N, D]` (the decoder output, in the compute dtype).
        kernel: float tensor `[V, D]` (the pre-softmax projection in the
            embedding's layout, so the embedding itself when tied: logits are
            `hidden @ kernel^T`). Cast to `hidden`'s dtype.
        labels: int tensor `[N]`.
        label_smoothing: float. eps_ls. Defaults to `0.1`.
        pad_id: int. Label id to ignore. Defaults to `0`.
        chunk_size: int. Rows per chunk. Defaults to `512`.

    Returns:
        A dict: `"loss_sum"` (float32 scalar, the smoothed loss summed over
        real tokens; differentiable with respect to `hidden` and `kernel`),
        `"negative_log_prob"` and `"right"` (float32 `[N]`).

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §3.4 and §5.4.
        - [Szegedy et al., 2016. Rethinking the Inception Architecture for Computer
          Vision](https://arxiv.org/abs/1512.00567), §7 (label smoothing).
    """
    labels = ops.cast(labels, "int32")
    dtype = hidden.dtype
    eps = float(label_smoothing)
    hidden_dim = ops.shape(hidden)[-1]
    vocab_size = ops.shape(kernel)[0]
    num_rows = ops.shape(hidden)[0]
    num_chunks = (num_rows + chunk_size - 1) // chunk_size
    padded_rows = num_chunks * chunk_size
    # [N] -> [C * n], padded with pad_id (zero loss, zero gradient)
    padded_labels = ops.pad(
        labels, [[0, padded_rows - num_rows]], constant_values=pad_id
    )

    def chunk_step(index, kernel, padded_hidden, state):
        start = index * chunk_size
        # [C * n, D] -> [n, D]; [C * n] -> [n]
        rows = ops.slice(padded_hidden, [start, 0], [chunk_size, hidden_dim])
        row_labels = ops.slice(padded_labels, [start], [chunk_size])
        real = ops.cast(ops.not_equal(row_labels, pad_id), "float32")
        # [n, D] x [V, D]^T -> [n, V]. Contracting D of both (einsum) leaves
        # the `[V, D]` kernel as it is: no transposed copy of it, in the loop
        # or (graph mode) per chunk.
        logits = ops.cast(ops.einsum("nd,vd->nv", rows, kernel), "float32")
        best = ops.max(logits, axis=-1)
        exp = ops.exp(logits - best[:, None])
        total = ops.sum(exp, axis=-1)
        log_normalizer = best + ops.log(total)
        label_logit = ops.take_along_axis(logits, row_labels[:, None], axis=-1)[:, 0]
        negative_log_prob = log_normalizer - label_logit
        # -sum_k q'(k) log p(k) = (1 - eps) (-log p(y)) + eps mean_k(-log p(k))
        per_token = (1.0 - eps) * negative_log_prob + eps * (
            log_normalizer - ops.mean(logits, axis=-1)
        )
        # d loss / d logits = p - q', zero on padding rows
        one_hot = ops.one_hot(row_labels, vocab_size, dtype="float32")
        logits_grad = (exp / total[:, None] - eps / ops.cast(vocab_size, "float32")) - (
            1.0 - eps
        ) * one_hot
        logits_grad = ops.cast(logits_grad * real[:, None], dtype)
        # [n, V] x [V, D] -> [n, D]; [n, V]^T x [n, D] -> [V, D]
        rows_grad = ops.cast(ops.matmul(logits_grad, kernel), "float32")
        kernel_grad = ops.cast(ops.einsum("nv,nd->vd", logits_grad, rows), "float32")
        right = ops.cast(label_logit >= best, "float32") * real
        return {
            "loss_sum": state["loss_sum"] + ops.sum(per_token * real),
            "kernel_grad": state["kernel_grad"] + kernel_grad,
            "hidden_grad": ops.slice_update(
                state["hidden_grad"], [start, 0], rows_grad
            ),
            "negative_log_prob": ops.slice_update(
                state["negative_log_prob"], [start], negative_log_prob * real
            ),
            "right": ops.slice_update(state["right"], [start], right),
        }

    @ops.custom_gradient
    def fused(hidden, kernel):
        # [N, D] -> [C * n, D]
        padded_hidden = ops.pad(hidden, [[0, padded_rows - num_rows], [0, 0]])
        state = ops.fori_loop(
            0,
            num_chunks,
            lambda index, state: chunk_step(index, kernel, padded_hidden, state),
            {
                "loss_sum": ops.zeros((), "float32"),
                "kernel_grad": ops.zeros((vocab_size, hidden_dim), "float32"),
                "hidden_grad": ops.zeros((padded_rows, hidden_dim), "float32"),
                "negative_log_prob": ops.zeros((padded_rows,), "float32"),
                "right": ops.zeros((padded_rows,), "float32"),
            },
        )
        hidden_grad = state["hidden_grad"][:num_rows]

        def grad(*upstream):
            # TensorFlow passes one upstream gradient per output, JAX one
            # tuple: the loss's comes first. The statistics have no gradient.
            scale = ops.cast(tree.flatten(upstream)[0], "float32")
            return (
                ops.cast(hidden_grad * scale, hidden.dtype),
                ops.cast(state["kernel_grad"] * scale, kernel.dtype),
            )

        outputs = (
            state["loss_sum"],
            state["negative_log_prob"][:num_rows],
            state["right"][:num_rows],
        )
        return outputs, grad

    loss_sum, negative_log_prob, right = fused(hidden, ops.cast(kernel, dtype))
    return {
        "loss_sum": loss_sum,
        "negative_log_prob": negative_log_prob,
        "right": right,
    }
