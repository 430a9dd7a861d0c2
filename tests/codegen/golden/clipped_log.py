def clipped_log_grad(x, floor):
    if type(x) not in array_kinds or type(floor) not in array_kinds:
        return by_structure(x, floor)
    try:
        # line 105: if np.any(x < 0.0):
        t1 = x < 0.0
        t2 = np.any(t1)
        if t2:
            # line 106: raise ValueError("x must not be negative")
            raise ValueError('x must not be negative')
        del t2
        # line 107: try:
        try:
            try:
                # line 108: if np.min(x) == 0.0:
                t3 = np.min(x)
                t4 = t3 == 0.0
                if t4:
                    # line 109: raise FloatingPointError("log of zero")
                    raise FloatingPointError('log of zero')
                # line 110: y = np.log(x)
                y_1 = np.log(x)
            except FloatingPointError as error:
                # line 112: print("clipping:", error)
                print('clipping:', error)
                # line 113: y = np.log(np.maximum(x, floor))
                t5 = np.maximum(x, floor)
                y = np.log(t5)
                caught_1 = 1
            else:
                # line 115: y = y * floor
                y = y_1 * floor
                caught_1 = 0
            caught = 0
        except:
            # line 117: print("done")
            print('done')
            raise
        # line 117: print("done")
        print('done')
        # grad of line 118: return np.sum(y ** 2)
        dy = 2.0 * y
        del y
        # grad of line 107: try:
        if caught == 0:
            if caught_1 == 0:
                # grad of line 115: y = y * floor
                t6 = dy * floor
                dy_1 = unbroadcast(t6, x)
                del t6
                t7 = dy * y_1
                dfloor = unbroadcast(t7, floor)
                del t7
                # grad of line 110: y = np.log(x)
                dx = dy_1 / x
                del dy_1
            else:
                # grad of line 113: y = np.log(np.maximum(x, floor))
                dt5 = dy / t5
                t8 = larger_share(x, floor)
                t9 = dt5 * t8
                dx = unbroadcast(t9, x)
                del t9
                t10 = larger_share(floor, x)
                t11 = dt5 * t10
                del dt5
                dfloor = unbroadcast(t11, floor)
                del t11
        del dy
        # the gradients, with the shapes and dtypes of the arguments
        if dx.__class__ is not float or x.__class__ is not float:
            dx = as_gradient_of(dx, x)
        if dfloor.__class__ is not float or floor.__class__ is not float:
            dfloor = as_gradient_of(dfloor, floor)
        return dx, dfloor
    except Exception as error_:
        raise at_user_line(error_)
