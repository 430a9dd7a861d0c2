def softmax_cross_entropy_grad(W, x, labels):
    if (type(W) not in array_kinds or type(x) not in array_kinds or
            type(labels) not in array_kinds):
        return by_structure(W, x, labels)
    try:
        # line 25: logits = x @ W
        logits = x @ W
        # line 26: logits = logits - np.max(logits, axis=1, keepdims=True)
        t1 = np.max(logits, axis=1, keepdims=True)
        logits_1 = logits - t1
        # line 27: log_probs = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
        t2 = np.exp(logits_1)
        t3 = np.sum(t2, axis=1, keepdims=True)
        t4 = np.log(t3)
        log_probs = logits_1 - t4
        del t4
        # line 28: return -np.mean(np.sum(labels * log_probs, axis=1))
        t5 = labels * log_probs
        t6 = np.sum(t5, axis=1)
        # grad of line 28: return -np.mean(np.sum(labels * log_probs, axis=1))
        t7 = np.size(t6)
        t8 = -1.0 / t7
        dt6 = broadcast_like(t8, t6)
        del t6
        t9 = np.expand_dims(dt6, 1)
        del dt6
        t10 = np.shape(t5)
        del t5
        dt5 = np.broadcast_to(t9, t10)
        del t9
        t11 = dt5 * labels
        del dt5
        dlog_probs = unbroadcast(t11, log_probs)
        del log_probs, t11
        # grad of line 27: log_probs = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
        dlogits_1 = unbroadcast(dlog_probs, logits_1)
        del logits_1
        t12 = -dlog_probs
        del dlog_probs
        dt4 = unbroadcast(t12, t3)
        del t12
        dt3 = dt4 / t3
        del dt4, t3
        dlogits_1_1 = dt3 * t2
        del dt3, t2
        dlogits_1 = dlogits_1 + dlogits_1_1
        del dlogits_1_1
        # grad of line 26: logits = logits - np.max(logits, axis=1, keepdims=True)
        dlogits = unbroadcast(dlogits_1, logits)
        t13 = -dlogits_1
        del dlogits_1
        dt1 = unbroadcast(t13, t1)
        del t13
        winners = logits == t1
        del t1
        count = count_true(winners, 1, True, logits)
        del logits
        t14 = dt1 / count
        del dt1
        dlogits_1 = winners * t14
        del t14
        dlogits = dlogits + dlogits_1
        del dlogits_1
        # grad of line 25: logits = x @ W
        dW = matmul_grad_rhs(dlogits, x, W)
        del dlogits
        # the gradients, with the shapes and dtypes of the arguments
        if dW.__class__ is not float or W.__class__ is not float:
            dW = as_gradient_of(dW, W)
        return dW
    except Exception as error:
        raise at_user_line(error)
