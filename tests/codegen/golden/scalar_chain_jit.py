def scalar_chain_grad(x, y):
    try:
        # line 32: a = math.sin(x) * y + x / y
        t1 = math.sin(x)
        t2 = t1 * y
        t3 = x / y
        a = t2 + t3
        # line 33: b = math.exp(-a * a) + math.sqrt(x * x + y * y)
        t4 = -a
        t5 = t4 * a
        t6 = math.exp(t5)
        t7 = x * x
        t8 = y * y
        t9 = t7 + t8
        t10 = math.sqrt(t9)
        b = t6 + t10
        # line 34: return a * b + math.tanh(b) * SCALE
        t11 = math.tanh(b)
        # grad of line 34: return a * b + math.tanh(b) * SCALE
        t12 = t11 * t11
        t13 = 1 - t12
        db = SCALE * t13
        db += a
        # grad of line 33: b = math.exp(-a * a) + math.sqrt(x * x + y * y)
        t14 = db * 0.5
        dt9 = t14 / t10
        dy = dt9 * y
        dy = dy * 2
        dx = dt9 * x
        dx = dx * 2
        dt5 = db * t6
        dt4 = dt5 * a
        da = dt5 * t4
        da_ = b
        da_ += da
        da_ -= dt4
        # grad of line 32: a = math.sin(x) * y + x / y
        dx_1 = da_ / y
        t15 = -da_
        t16 = t15 * t3
        dy_1 = t16 / y
        dx += dx_1
        dy += dy_1
        dt1 = da_ * y
        dy_1 = da_ * t1
        dy += dy_1
        t17 = math.cos(x)
        dx_1 = dt1 * t17
        dx += dx_1
        return dx, dy
    except Exception as error:
        raise at_user_line(error)
