def huber_grad(r, delta=1.0):
    if (type(r) not in array_kinds or type(delta) not in array_kinds or
            complex_values(r, delta)):
        return by_structure(r, delta)
    try:
        # line 60: if abs(r) <= delta:
        t1 = np.abs(r)
        t2 = t1 <= delta
        if t2:
            # line 61: return 0.5 * r ** 2
            t3 = r ** 2
            result = 0.5 * t3
            del t3
        else:
            # line 62: return delta * (abs(r) - 0.5 * delta)
            t4 = 0.5 * delta
            t5 = t1 - t4
            del t4
            result = delta * t5
        # grad of line 62: return delta * (abs(r) - 0.5 * delta)
        dresult = scalar_output_seed(result, 'corpus.py:62')
        del result
        # grad of line 60: if abs(r) <= delta:
        if t2:
            # grad of line 61: return 0.5 * r ** 2
            t6 = dresult * 0.5
            dt3 = unbroadcast(t6, r)
            del t6
            t7 = dt3 * 2
            del dt3
            dr = t7 * r
            del t7
            # grad of line 62: return delta * (abs(r) - 0.5 * delta)
            dt1 = zero_adjoint(t1)
        else:
            t8 = dresult * delta
            dt5 = unbroadcast(t8, t5)
            del t8
            dt1 = unbroadcast(dt5, r)
            del dt5
            dr = zero_adjoint(r)
        del t1
        # grad of line 60: if abs(r) <= delta:
        t9 = np.sign(r)
        dr_1 = dt1 * t9
        del dt1
        dr += dr_1
        del dr_1
        # the gradients, with the shapes and dtypes of the arguments
        if dr.__class__ is not float or r.__class__ is not float:
            dr = as_gradient_of(dr, r)
        return dr
    except Exception as error:
        raise at_user_line(error)
