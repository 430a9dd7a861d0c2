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
        t9 = np.shape(t6)
        del t6
        dt6 = np.broadcast_to(t8, t9)
        t10 = np.expand_dims(dt6, 1)
        del dt6
        t11 = np.shape(t5)
        del t5
        dt5 = np.broadcast_to(t10, t11)
        del t10
        t12 = dt5 * labels
        del dt5
        dlog_probs = unbroadcast(t12, log_probs)
        del log_probs, t12
        # grad of line 27: log_probs = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
        dlogits_1 = unbroadcast(dlog_probs, logits_1)
        del logits_1
        t13 = -dlog_probs
        del dlog_probs
        dt4 = unbroadcast(t13, t3)
        del t13
        dt3 = dt4 / t3
        del dt4, t3
        dlogits_1_1 = dt3 * t2
        del dt3, t2
        dlogits_1 = dlogits_1 + dlogits_1_1
        del dlogits_1_1
        # grad of line 26: logits = logits - np.max(logits, axis=1, keepdims=True)
        dlogits = unbroadcast(dlogits_1, logits)
        t14 = -dlogits_1
        del dlogits_1
        dt1 = unbroadcast(t14, t1)
        del t14
        winners = logits == t1
        del logits, t1
        t15 = np.sum(winners, axis=1, keepdims=True)
        t16 = dt1 / t15
        del dt1, t15
        dlogits_1 = winners * t16
        del t16
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
