"""Realistic NumPy programs with control flow, written the way users write them.

Branches, loops over ranges and arrays, while loops, early returns, ``break`` and
``continue``, calls to helpers, and lists built in loops. Each :class:`Program`
input builder keeps every branch condition and every while-loop count well away
from its switch point, so a small perturbation of an input never changes the
path taken and central finite differences stay accurate. ``CONTROL_FLOW`` lists
them all; ``tests/corpus/test_control_flow.py`` checks each one.
"""

from __future__ import annotations

import numpy as np

from tests.corpus.programs import Program

# ----- helpers the programs call -----


def sigmoid(z):
    """Logistic sigmoid."""
    return 1.0 / (1.0 + np.exp(-z))


def softplus(z):
    """Numerically stable softplus of a scalar, branching on its sign."""
    if z > 0:
        return z + np.log1p(np.exp(-z))
    return np.log1p(np.exp(z))


def leaky_relu(z, slope=0.1):
    """Leaky ReLU of a scalar."""
    if z > 0:
        return z
    return slope * z


def horner(coeffs, t):
    """Polynomial with coefficients highest degree first, at t, by Horner's rule."""
    p = 0.0
    for c in coeffs:
        p = p * t + c
    return p


def gaussian_bump(x, center, width=1.0, height=1.0):
    """Gaussian bump of the given width and height."""
    return height * np.exp(-(((x - center) / width) ** 2))


def smooth_clamp(v, low=-1.0, high=1.0):
    """Clamps a scalar smoothly: identity inside [low, high], tanh-compressed outside."""
    if v > high:
        return high + np.tanh(v - high)
    if v < low:
        return low + np.tanh(v - low)
    return v


def softmin3(a, b, c):
    """Soft minimum of three scalars."""
    return -np.log(np.exp(-a) + np.exp(-b) + np.exp(-c))


def logistic_growth_rate(y, r, capacity):
    """Right-hand side of logistic growth dy/dt = r y (1 - y / K)."""
    return r * y * (1.0 - y / capacity)


# ----- branches -----


def huber_of_mean_residual(x, target, delta=1.0):
    """Huber loss of the mean residual: quadratic near zero, linear in the tails."""
    r = np.mean(x) - target
    if abs(r) <= delta:
        return 0.5 * r ** 2
    return delta * (abs(r) - 0.5 * delta)


def branch_on_sum_sign(x, W):
    """A tanh read-out when the inputs sum positive, a quadratic otherwise."""
    z = W @ x
    if np.sum(x) > 0:
        return np.sum(np.tanh(z))
    return 0.5 * np.sum(z ** 2)


def softplus_sum(x, w):
    """Sum of a stable, branching softplus of weighted inputs."""
    total = 0.0
    for i in range(len(x)):
        total += softplus(w[i] * x[i])
    return total


def piecewise_segment_cost(x, slopes):
    """Piecewise cost with an elif chain picking each element's segment."""
    cost = 0.0
    for v in x:
        if v < -1.0:
            cost += slopes[0] * (-1.0 - v) + 1.0
        elif v < 0.5:
            cost += v ** 2
        elif v < 1.5:
            cost += slopes[1] * v
        else:
            cost += slopes[2] * v ** 2
    return cost


def adaptive_gain(x, g):
    """Conditional expressions pick a gain and an offset from the signal's extremes."""
    gain = 2.0 * g if np.max(x) > 1.0 else g / 2.0
    offset = np.mean(x) if np.min(x) < 0 else 0.0
    return np.sum(np.tanh(gain * (x - offset)))


def regime_energy(x, w):
    """Chooses an energy from the mean and spread using and / or / not."""
    m = np.mean(x)
    s = np.std(x)
    if m > 0 and s < 1.0:
        return np.sum(w * x ** 2)
    elif m < 0 or not s < 2.0:
        return np.sum(np.sin(w * x))
    else:
        return np.sum(w) * m * s


def norm_by_order(x, order):
    """A smooth norm whose kind is chosen by a non-differentiated integer order."""
    if order == 1:
        return np.sum(np.sqrt(x ** 2 + 1e-3))
    elif order == 2:
        return np.sqrt(np.sum(x ** 2))
    return np.sum(x ** 4) ** 0.25


def stacked_layers_by_mode(W, x, depth, mode):
    """A depth-layer tied-weight network whose activation is picked by an integer mode."""
    h = x
    for _ in range(depth):
        z = W @ h
        if mode == 0:
            h = np.tanh(z)
        else:
            h = z / (1.0 + z ** 2)
    return np.sum(h ** 2)


def pinball_loss(pred, target, tau):
    """Quantile (pinball) loss; a conditional expression picks the slope per residual."""
    loss = 0.0
    for p, t in zip(pred, target):
        r = t - p
        loss += tau * r if r > 0 else (tau - 1.0) * r
    return loss


def box_barrier(x, w):
    """Log barrier inside the box (-1, 1), quadratics outside, tested with and / not."""
    total = 0.0
    for i in range(len(x)):
        inside = x[i] > -1.0 and x[i] < 1.0
        if inside:
            total += -w[i] * np.log(1.0 - x[i] ** 2)
        elif not x[i] < 0:
            total += w[i] * (x[i] - 0.5) ** 2
        else:
            total += w[i] * (x[i] + 0.5) ** 2
    return total


# ----- time stepping and iterations -----


def euler_decay(y0, k, n_steps):
    """Explicit Euler for dy/dt = -k y + sin(y), for n_steps steps."""
    dt = 0.05
    y = y0
    for _ in range(n_steps):
        y = y + dt * (-k * y + np.sin(y))
    return np.sum(y ** 2)


def leapfrog_oscillator(q0, p0, omega):
    """Velocity Verlet steps of a harmonic oscillator, then a position-momentum score."""
    dt = 0.1
    q, p = q0, p0
    for _ in range(25):
        p = p - 0.5 * dt * omega ** 2 * q
        q = q + dt * p
        p = p - 0.5 * dt * omega ** 2 * q
    return np.sum(q ** 2) + np.sum(p * q0)


def rk4_logistic_growth(y0, r, capacity):
    """Classical Runge-Kutta integration of logistic growth over ten steps."""
    dt = 0.2
    y = y0
    for _ in range(10):
        k1 = logistic_growth_rate(y, r, capacity)
        k2 = logistic_growth_rate(y + 0.5 * dt * k1, r, capacity)
        k3 = logistic_growth_rate(y + 0.5 * dt * k2, r, capacity)
        k4 = logistic_growth_rate(y + dt * k3, r, capacity)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(y)


def midpoint_predator_prey(state, params):
    """Midpoint-method integration of Lotka-Volterra dynamics on scalars."""
    dt = 0.05
    prey, predator = state[0], state[1]
    a, b, c, d = params[0], params[1], params[2], params[3]
    for _ in range(20):
        mid_prey = prey + 0.5 * dt * (a * prey - b * prey * predator)
        mid_predator = predator + 0.5 * dt * (d * prey * predator - c * predator)
        prey = prey + dt * (a * mid_prey - b * mid_prey * mid_predator)
        predator = predator + dt * (d * mid_prey * mid_predator - c * mid_predator)
    return np.log(prey) + np.log(predator)


def fixed_point_equilibrium(A, b):
    """Equilibrium of z = tanh(A z + b) after thirty fixed-point sweeps."""
    z = np.zeros_like(b)
    for _ in range(30):
        z = np.tanh(A @ z + b)
    return np.sum(z ** 2)


def newton_square_roots(a):
    """Six Newton steps for sqrt(a), started from (1 + a) / 2."""
    y = 0.5 * (1.0 + a)
    for _ in range(6):
        y = 0.5 * (y + a / y)
    return np.sum(y * np.log(a + 1.0))


def newton_cubic_root(p, q):
    """Real root of t^3 + p t - q = 0 (p > 0) after eight Newton steps."""
    t = q / (1.0 + p)
    for _ in range(8):
        t = t - (t ** 3 + p * t - q) / (3.0 * t ** 2 + p)
    return t


def horner_reversed_range(coeffs, t):
    """Polynomial (lowest degree first) at each point of t, by Horner over a reversed range."""
    p = np.zeros_like(t)
    for i in range(len(coeffs) - 1, -1, -1):
        p = p * t + coeffs[i]
    return np.sum(p ** 2)


def cumulative_sum_penalty(x, w):
    """A cumulative sum built element by element, then a weighted squared penalty."""
    n = len(x)
    out = np.zeros(n)
    out[0] = x[0]
    for i in range(1, n):
        out[i] = out[i - 1] + x[i]
    return np.sum(w * out ** 2)


def moving_average_fit(x, target):
    """A three-point moving average written with index updates, fitted to a target."""
    n = x.shape[0]
    smooth = np.zeros(n - 2)
    for i in range(n - 2):
        smooth[i] = (x[i] + x[i + 1] + x[i + 2]) / 3.0
    return np.mean((smooth - target) ** 2)


def exponential_moving_average(x, alpha):
    """Exponential moving average filled in step by step, correlated with the signal."""
    ema = np.zeros_like(x)
    ema[0] = x[0]
    for t in range(1, len(x)):
        ema[t] = alpha * x[t] + (1.0 - alpha) * ema[t - 1]
    return np.sum(ema * x)


def running_max_margin(x, w):
    """Running maximum found with an if inside a loop, then a squared margin."""
    m = x[0]
    for i in range(1, len(x)):
        if x[i] > m:  # noqa: PLR1730 - the branch itself is what this program tests
            m = x[i]
    return (m - np.dot(w, x)) ** 2


def power_iteration_eigenvalue(A):
    """Dominant eigenvalue of a symmetric matrix by power iteration, normalised each step."""
    v = np.ones(A.shape[0])
    for _ in range(40):
        v = A @ v
        v = v / np.linalg.norm(v)
    return v @ A @ v


def momentum_descent(w0, X, y):
    """Ten heavy-ball gradient steps on least squares; the final loss."""
    w = w0
    velocity = np.zeros_like(w0)
    for _ in range(10):
        gradient = X.T @ (X @ w - y) / len(y)
        velocity = 0.9 * velocity - 0.1 * gradient
        w = w + velocity
    return 0.5 * np.mean((X @ w - y) ** 2)


def poisson_log_likelihood(rates, counts):
    """Negative Poisson log-likelihood accumulated term by term."""
    s = 0.0
    for i in range(len(counts)):
        s += counts[i] * np.log(rates[i]) - rates[i]
    return -s


# ----- sequences, rows and nested loops -----


def attention_row_by_row(Q, K, V):
    """Softmax attention computed one query row at a time."""
    total = 0.0
    for q in Q:
        scores = K @ q / np.sqrt(K.shape[1])
        weights = np.exp(scores - np.max(scores))
        weights = weights / np.sum(weights)
        total = total + np.sum((weights @ V) ** 2)
    return total


def rnn_sequence_loss(Wx, Wh, b, xs, target):
    """Elman RNN over a sequence; squared error of the final hidden state."""
    h = np.zeros(Wh.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(Wx @ xs[t] + Wh @ h + b)
    return np.sum((h - target) ** 2)


def gru_final_state(W, U, xs):
    """A gated recurrent cell with an update gate, run over the rows of xs."""
    h = np.zeros(U.shape[0])
    for x in xs:
        z = sigmoid(W @ x + U @ h)
        candidate = np.tanh(W @ x - U @ h)
        h = (1.0 - z) * h + z * candidate
    return np.sum(h)


def hmm_forward_log_likelihood(transition_logits, emission_log_probs):
    """Log-likelihood of an HMM by the forward recursion in log space."""
    log_A = transition_logits - np.log(np.sum(np.exp(transition_logits), axis=1, keepdims=True))
    alpha = emission_log_probs[0] - np.log(log_A.shape[0])
    for t in range(1, emission_log_probs.shape[0]):
        alpha = emission_log_probs[t] + np.log(np.sum(np.exp(alpha[:, None] + log_A), axis=0))
    return np.log(np.sum(np.exp(alpha)))


def bilinear_double_loop(A, x, y):
    """Bilinear form x^T A y written as two nested index loops."""
    total = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            total += A[i, j] * x[i] * y[j]
    return total


def pairwise_repulsion(pos):
    """Soft repulsion energy summed over all pairs i < j of 2-D points."""
    n = pos.shape[0]
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d = pos[i] - pos[j]
            energy += 1.0 / (1.0 + d @ d)
    return energy


def matmul_by_loops(A, B):
    """Matrix product filled cell by cell in nested loops, then its Frobenius norm squared."""
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = np.dot(A[i], B[:, j])
    return np.sum(C ** 2)


def conv1d_valid(x, kernel):
    """Valid 1-D convolution with nested loops and += element updates."""
    n, k = len(x), len(kernel)
    out = np.zeros(n - k + 1)
    for i in range(n - k + 1):
        for j in range(k):
            out[i] += kernel[j] * x[i + j]
    return np.sum(np.tanh(out))


def gauss_seidel_solve(A, b):
    """Gauss-Seidel sweeps on a diagonally dominant system, updating x in place."""
    n = b.shape[0]
    x = np.zeros(n)
    for _ in range(15):
        for i in range(n):
            residual = b[i] - np.dot(A[i], x) + A[i, i] * x[i]
            x[i] = residual / A[i, i]
    return np.sum(x ** 2)


def soft_dtw_alignment(x, y):
    """Soft dynamic-time-warping cost: a table filled cell by cell with an elif chain."""
    n, m = len(x), len(y)
    R = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            cost = (x[i] - y[j]) ** 2
            if i == 0 and j == 0:
                R[i, j] = cost
            elif i == 0:
                R[i, j] = cost + R[i, j - 1]
            elif j == 0:
                R[i, j] = cost + R[i - 1, j]
            else:
                R[i, j] = cost + softmin3(R[i - 1, j - 1], R[i - 1, j], R[i, j - 1])
    return R[n - 1, m - 1]


def odd_even_interaction(x):
    """Couples each odd-indexed entry with its neighbours using range(1, n - 1, 2)."""
    total = 0.0
    for i in range(1, len(x) - 1, 2):
        total += x[i] * x[i + 1] - 0.5 * x[i - 1] ** 2
    return total


def position_weighted_energy(x):
    """Energy where each entry is weighted by its position, via enumerate."""
    energy = 0.0
    for i, v in enumerate(x):
        energy += (i + 1) * np.cos(v) + v ** 2 / (i + 1)
    return energy


def row_weighted_norms(X, w):
    """Weighted sum of smoothed row norms, with enumerate over the rows of a matrix."""
    total = 0.0
    for i, row in enumerate(X):
        total += w[i] * np.sqrt(np.sum(row ** 2) + 1.0)
    return total


def paired_log_ratio(x, y):
    """Log-ratio score over paired entries, walking both arrays with zip."""
    score = 0.0
    for u, v in zip(x, y):
        score += np.log(1.0 + u ** 2) - np.log(1.0 + v ** 2) + u * v
    return score ** 2


def zip_rows_triplet(anchors, positives, negatives):
    """Soft triplet loss over rows zipped from three matrices."""
    loss = 0.0
    for a, p, n in zip(anchors, positives, negatives):
        loss += np.log1p(np.exp(np.sum((a - p) ** 2) - np.sum((a - n) ** 2)))
    return loss / anchors.shape[0]


# ----- while loops -----


def double_until_large(x):
    """Doubles y until its norm passes 1000, then scores it."""
    y = x
    while np.linalg.norm(y) < 1000.0:
        y = 2.0 * y
    return np.sum(np.sin(y / 500.0)) + np.sum(x ** 2)


def capped_gradient_step(x, A):
    """Halves the step size until the update is shorter than 0.5, then takes the step."""
    gradient = A.T @ (A @ x - 1.0)
    step = 1.0
    while step * np.linalg.norm(gradient) > 0.5:
        step = 0.5 * step
    x_new = x - step * gradient
    return np.sum((A @ x_new - 1.0) ** 2)


def babylonian_until_converged(a):
    """Babylonian square root of a scalar, iterating while the residual is large."""
    y = a
    iterations = 0
    while abs(y * y - a) > 1e-3 and iterations < 50:
        y = 0.5 * (y + a / y)
        iterations += 1
    return y


def simulate_until_time(y0, k):
    """Euler steps of a cubic damping law while the simulated time is below 0.95."""
    t = 0.0
    dt = 0.1
    y = y0
    while t < 0.95:
        y = y - dt * k * y ** 3
        t = t + dt
    return np.sum(y ** 2)


def grow_until_threshold(x, rate):
    """Grows a population in a while True loop and leaves with break past a threshold."""
    y = x
    steps = 0
    while True:
        y = y * (1.0 + rate)
        steps += 1
        if np.sum(y) > 10.0 or steps >= 30:
            break
    return np.sum(y ** 2) / steps


# ----- early return, break and continue -----


def first_large_entry(x, w):
    """Returns at the first entry above 3, otherwise a weighted sum."""
    for i in range(len(x)):
        if x[i] > 3.0:
            return x[i] ** 2 * w[i]
    return np.sum(w * x)


def early_return_on_negative_mean(x, W):
    """Returns a plain penalty early when the mean is negative, else runs a small network."""
    if np.mean(x) < 0:
        return np.sum(x ** 2)
    h = np.tanh(W @ x)
    for _ in range(3):
        h = np.tanh(W @ h)
    return np.sum(h)


def first_close_pair(P):
    """Squared distance of the first pair closer than 0.5, from a nested loop; else a spread."""
    for i in range(P.shape[0]):
        for j in range(i + 1, P.shape[0]):
            d2 = np.sum((P[i] - P[j]) ** 2)
            if d2 < 0.25:
                return d2
    return np.sum(P ** 2)


def budgeted_energy(x, w):
    """Accumulates squared entries until a budget of 2 is spent, leaving with break."""
    spent = 0.0
    weighted = 0.0
    for i in range(len(x)):
        spent += x[i] ** 2
        weighted += w[i] * x[i]
        if spent > 2.0:
            break
    return spent + weighted


def skip_negative_sqrt(x, w):
    """Weighted square roots of the positive entries; negatives are skipped with continue."""
    total = 0.0
    for i in range(len(x)):
        if x[i] <= 0:
            continue
        total += w[i] * np.sqrt(x[i])
    return total + 0.1 * np.sum(x ** 2)


def off_diagonal_coupling(A, x):
    """Couplings of distinct pairs: the nested loop skips i == j with continue."""
    total = 0.0
    n = len(x)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            total += A[i, j] * np.tanh(x[i] - x[j])
    return total


# ----- calls to helpers -----


def leaky_network(W, x):
    """Hidden units through a leaky ReLU helper, with its default and a keyword slope."""
    z = W @ x
    total = 0.0
    for i in range(len(z)):
        total += leaky_relu(z[i]) + leaky_relu(-z[i], slope=0.3)
    return total


def bump_mixture(x, centers):
    """Sum of Gaussian bumps from a helper called with positions, keywords and defaults."""
    total = 0.0
    for i in range(len(centers)):
        total += np.sum(gaussian_bump(x, centers[i], width=0.5 + i))
    return total + np.sum(gaussian_bump(x, 0.0, height=0.2))


def nested_helper_loss(w, X, y):
    """Logistic loss whose per-example term is a nested helper closing over w."""

    def example_loss(xi, yi, reg=0.01):
        margin = yi * np.dot(w, xi)
        return np.log1p(np.exp(-margin)) + reg * np.dot(w, w)

    total = 0.0
    for i in range(X.shape[0]):
        total += example_loss(X[i], y[i])
    return total / X.shape[0]


def nested_helper_with_loop(x, decay):
    """A nested helper that itself loops, applied to two halves of the input."""

    def discounted_sum(values, gamma=0.9):
        acc = 0.0
        for v in values:
            acc = gamma * acc + v
        return acc

    return discounted_sum(x[:4]) ** 2 + discounted_sum(x[4:], gamma=decay)


def polynomial_path_cost(coeffs, ts):
    """Squared values of a polynomial along a path, from a helper that loops (Horner)."""
    total = 0.0
    for t in ts:
        total += horner(coeffs, t) ** 2
    return total


def clamped_regression(w, X, y):
    """Regression through a smooth-clamp helper that returns early on either side."""
    loss = 0.0
    for i in range(X.shape[0]):
        pred = smooth_clamp(X[i] @ w, high=1.5)
        loss += (pred - y[i]) ** 2
    return loss


# ----- lists -----


def rnn_stacked_outputs(Wx, Wh, xs, v):
    """Collects RNN hidden states with append, stacks them, and reads them out."""
    h = np.zeros(Wh.shape[0])
    states = []
    for x in xs:
        h = np.tanh(Wx @ x + Wh @ h)
        states.append(h)
    H = np.stack(states)
    return np.sum((H @ v) ** 2)


def sum_of_listed_terms(x, y):
    """Per-element log-cosh terms collected in a list and added with sum()."""
    terms = []
    for i in range(len(x)):
        terms.append(np.log(np.cosh(x[i] - y[i])))
    return sum(terms)


def appended_residuals(params, ts, ys):
    """Residuals of an exponential decay model appended to a list, then np.array."""
    residuals = []
    for t, y in zip(ts, ys):
        residuals.append(params[0] * np.exp(-params[1] * t) - y)
    r = np.array(residuals)
    return r @ r


def comprehension_products(x):
    """Adjacent products from a list comprehension turned into an array."""
    products = np.array([x[i] * x[i + 1] for i in range(len(x) - 1)])
    return np.sum(products ** 2) - np.sum(products)


def chain_energy_generator(x):
    """Nearest-neighbour chain energy written as generator expressions inside sum()."""
    n = len(x)
    return sum(x[i] * x[i + 1] for i in range(n - 1)) + 0.5 * sum(x[i] ** 2 for i in range(n))


def row_scores_comprehension(X, w):
    """Per-row scores from a comprehension over rows, then a log-sum-exp."""
    scores = np.array([np.dot(row, w) for row in X])
    return np.log(np.sum(np.exp(scores)))


# ----- loops that run zero times -----


def loop_zero_iterations_constant_range(x):
    """A loop over range(0) never runs; the result comes from the other terms."""
    total = np.sum(x ** 2)
    for i in range(0):
        total = total + x[i]
    return total


def loop_zero_iterations_count_argument(x, w, n):
    """Residual updates repeated n times, with n = 0 passed in."""
    y = x
    for _ in range(n):
        y = y + 0.1 * np.tanh(w * y)
    return np.sum(y * w)


def loop_zero_iterations_empty_rows(X, w):
    """Logistic terms over the rows of a (0, 3) matrix: only the ridge term remains."""
    total = 0.5 * np.dot(w, w)
    for row in X:
        total = total + np.log1p(np.exp(-(row @ w)))
    return total


def loop_zero_iterations_while_already_small(x):
    """A while loop whose condition is false from the start."""
    y = x
    while np.linalg.norm(y) > 100.0:
        y = 0.5 * y
    return np.sum(np.exp(y))


def loop_zero_iterations_empty_generator(x, n):
    """A generator over range(n) with n = 0 adds nothing to a quadratic."""
    return sum(x[i] ** 3 for i in range(n)) + np.sum(x ** 2)


def loop_zero_iterations_inner_range(A, x):
    """The inner range(i, i) never runs; only the diagonal terms after it count."""
    total = 0.0
    for i in range(len(x)):
        for j in range(i, i):
            total += A[i, j] * x[j]
        total += A[i, i] * x[i] ** 2
    return total


# ----- branches in loops, loops in branches -----


def alternating_sign_series(x):
    """Even steps add a sine, odd steps subtract a cosine: the branch flips each iteration."""
    total = 0.0
    for i in range(len(x)):
        if i % 2 == 0:
            total += np.sin(x[i])
        else:
            total -= np.cos(x[i])
    return total


def sign_dependent_updates(x, w):
    """A per-entry branch on the data chooses between two recurrent update rules."""
    h = 0.0
    for i in range(len(x)):
        if x[i] * w[i] > 0:
            h = 0.9 * h + x[i] * w[i]
        else:
            h = 0.5 * h - np.exp(x[i] * w[i])
    return h


def loops_inside_branches(x, steps):
    """Smooths towards the mean or sharpens with tanh, by the sign of the mean."""
    y = x
    if np.mean(x) > 0:
        for _ in range(steps):
            y = 0.8 * y + 0.2 * np.mean(y)
    else:
        for _ in range(steps):
            y = np.tanh(1.5 * y)
    return np.sum(y ** 2)


# ----- inputs -----


def _normal(rng, *shape, scale=1.0):
    return rng.normal(scale=scale, size=shape)


def _away(rng, *shape, low=0.2, high=1.5):
    """Values with magnitude in [low, high] and random sign: away from kinks at 0."""
    return rng.uniform(low, high, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _positive(rng, *shape, low=0.5, high=2.0):
    return rng.uniform(low, high, size=shape)


def _scalar(rng, low, high):
    return float(rng.uniform(low, high))


def _until(rng, draw, ok):
    """Draws ``draw(rng)`` until ``ok(args)`` holds: rejects inputs near a switch point."""
    while True:
        args = draw(rng)
        if ok(*args):
            return args


def _far(values, points, margin):
    """Whether every value is at least ``margin`` away from every point."""
    values = np.atleast_1d(np.asarray(values, dtype=np.float64))
    return all(np.all(np.abs(values - p) > margin) for p in points)


def _log_count_safe(ratio, margin=0.1):
    """Whether log2(ratio) is away from every integer: a halving or doubling count is stable."""
    fraction = np.log2(ratio) % 1.0
    return margin < fraction < 1.0 - margin


def _huber_args(rng):
    x = _normal(rng, 5)
    r = rng.choice([-1.0, 1.0]) * rng.choice([rng.uniform(0.2, 0.8), rng.uniform(1.3, 2.0)])
    return [x, float(np.mean(x) - r)]


def _sum_sign_args(rng):
    x = _normal(rng, 4)
    x = x - np.mean(x) + rng.choice([-1.0, 1.0]) * rng.uniform(0.3, 1.0)
    return [x, _normal(rng, 3, 4, scale=0.5)]


def _regime_args(rng):
    z = _normal(rng, 6)
    z = (z - np.mean(z)) / np.std(z)
    mean = rng.choice([-0.6, 0.6])
    spread = rng.choice([0.6, 1.5, 2.5])
    return [mean + spread * z, _positive(rng, 6)]


def _double_args(rng):
    x = _normal(rng, 4)
    fraction = np.log2(1000.0 / np.linalg.norm(x)) % 1.0
    return [x * 2.0 ** (fraction - 0.5 + rng.uniform(-0.3, 0.3))]


def _capped_ok(x, A):
    norm = np.linalg.norm(A.T @ (A @ x - 1.0))
    return norm < 0.45 or _log_count_safe(norm / 0.5)


def _babylonian_ok(a):
    y, residuals = a, []
    for _ in range(50):
        residuals.append(abs(y * y - a))
        if residuals[-1] <= 1e-3:
            break
        y = 0.5 * (y + a / y)
    return all(abs(np.log10(r / 1e-3)) > 0.1 for r in residuals)


def _grow_ok(x, rate):
    steps = np.log(10.0 / np.sum(x)) / np.log(1.0 + rate)
    return 0.0 < steps < 29.0 and 0.1 < steps % 1.0 < 0.9


def _close_pair_ok(P):
    d2 = np.sum((P[:, None, :] - P[None, :, :]) ** 2, axis=-1)
    return _far(d2[np.triu_indices(len(P), 1)], [0.25], 0.02)


def _pinball_args(rng):
    pred = _normal(rng, 6)
    return [pred, pred + _away(rng, 6), _scalar(rng, 0.1, 0.9)]


def _running_max_args(rng):
    x = rng.permutation(np.linspace(-2.0, 2.0, 7)) + rng.uniform(-0.05, 0.05, size=7)
    return [x, _normal(rng, 7, scale=0.5)]


def _symmetric_with_gap(rng):
    q, _ = np.linalg.qr(_normal(rng, 4, 4))
    return [q @ np.diag([5.0, 2.0, 1.0, -0.5]) @ q.T]


def _first_large_args(rng):
    x = 2.0 * _normal(rng, 6)
    if rng.random() < 0.5:
        x[rng.integers(0, 6)] = rng.uniform(3.3, 4.0)
    return [x, _normal(rng, 6)]


CONTROL_FLOW = [
    # branches
    Program(huber_of_mean_residual, _huber_args, (0, 1)),
    Program(branch_on_sum_sign, _sum_sign_args, (0, 1)),
    Program(softplus_sum, lambda r: [_away(r, 6), _away(r, 6)], (0, 1)),
    Program(piecewise_segment_cost,
            lambda r: _until(r, lambda r: [r.uniform(-2.5, 2.5, 8), _positive(r, 3)],
                             lambda x, s: _far(x, [-1.0, 0.5, 1.5], 0.1)), (0, 1)),
    Program(adaptive_gain,
            lambda r: _until(r, lambda r: [_normal(r, 5), _scalar(r, 0.5, 1.5)],
                             lambda x, g: _far(np.max(x), [1.0], 0.1)
                             and _far(np.min(x), [0.0], 0.1)), (0, 1)),
    Program(regime_energy, _regime_args, (0, 1)),
    Program(norm_by_order, lambda r: [_away(r, 5), int(r.integers(1, 4))], 0),
    Program(stacked_layers_by_mode,
            lambda r: [_normal(r, 3, 3, scale=0.6), _normal(r, 3), int(r.integers(1, 4)),
                       int(r.integers(0, 2))], (0, 1)),
    Program(pinball_loss, _pinball_args, (0, 1, 2)),
    Program(box_barrier,
            lambda r: _until(r, lambda r: [r.uniform(-2.0, 2.0, 7), _positive(r, 7)],
                             lambda x, w: _far(x, [-1.0, 0.0, 1.0], 0.1)), (0, 1)),
    # time stepping and iterations
    Program(euler_decay,
            lambda r: [_normal(r, 4), _positive(r, 4), int(r.integers(10, 21))], (0, 1)),
    Program(leapfrog_oscillator,
            lambda r: [_normal(r, 3), _normal(r, 3), _scalar(r, 0.5, 2.0)], (0, 1, 2)),
    Program(rk4_logistic_growth,
            lambda r: [_positive(r, 4, low=0.1, high=1.0), _scalar(r, 0.5, 1.5),
                       _scalar(r, 2.0, 4.0)], (0, 1, 2)),
    Program(midpoint_predator_prey,
            lambda r: [_positive(r, 2), _positive(r, 4, low=0.3, high=1.2)], (0, 1)),
    Program(fixed_point_equilibrium,
            lambda r: [_normal(r, 4, 4, scale=0.2), _normal(r, 4)], (0, 1)),
    Program(newton_square_roots, lambda r: [_positive(r, 5, low=0.5, high=9.0)], 0),
    Program(newton_cubic_root, lambda r: [_scalar(r, 0.5, 3.0), _scalar(r, -3.0, 3.0)], (0, 1)),
    Program(horner_reversed_range, lambda r: [_normal(r, 5), _normal(r, 4, scale=0.7)], (0, 1)),
    Program(cumulative_sum_penalty, lambda r: [_normal(r, 7), _positive(r, 7)], (0, 1)),
    Program(moving_average_fit, lambda r: [_normal(r, 8), _normal(r, 6)], (0, 1)),
    Program(exponential_moving_average, lambda r: [_normal(r, 8), _scalar(r, 0.2, 0.8)], (0, 1)),
    Program(running_max_margin, _running_max_args, (0, 1)),
    Program(power_iteration_eigenvalue, _symmetric_with_gap, 0),
    Program(momentum_descent,
            lambda r: [_normal(r, 3), _normal(r, 6, 3, scale=0.7), _normal(r, 6)], (0, 1, 2)),
    Program(poisson_log_likelihood,
            lambda r: [_positive(r, 6), r.integers(0, 5, 6).astype(np.float64)], (0, 1)),
    # sequences, rows and nested loops
    Program(attention_row_by_row,
            lambda r: [_normal(r, 3, 2), _normal(r, 4, 2), _normal(r, 4, 3)], (0, 1, 2)),
    Program(rnn_sequence_loss,
            lambda r: [_normal(r, 3, 2, scale=0.5), _normal(r, 3, 3, scale=0.5),
                       _normal(r, 3, scale=0.1), _normal(r, 5, 2), _normal(r, 3, scale=0.5)],
            (0, 1, 2, 3)),
    Program(gru_final_state,
            lambda r: [_normal(r, 3, 2, scale=0.5), _normal(r, 3, 3, scale=0.5), _normal(r, 5, 2)],
            (0, 1, 2)),
    Program(hmm_forward_log_likelihood,
            lambda r: [_normal(r, 3, 3), -_positive(r, 5, 3, low=0.2, high=3.0)], (0, 1)),
    Program(bilinear_double_loop,
            lambda r: [_normal(r, 3, 4), _normal(r, 3), _normal(r, 4)], (0, 1, 2)),
    Program(pairwise_repulsion, lambda r: [_normal(r, 5, 2)], 0),
    Program(matmul_by_loops, lambda r: [_normal(r, 2, 3), _normal(r, 3, 3)], (0, 1)),
    Program(conv1d_valid, lambda r: [_normal(r, 8), _normal(r, 3)], (0, 1)),
    Program(gauss_seidel_solve,
            lambda r: [4.0 * np.eye(3) + _normal(r, 3, 3, scale=0.5), _normal(r, 3)], (0, 1)),
    Program(soft_dtw_alignment, lambda r: [_normal(r, 4), _normal(r, 5)], (0, 1)),
    Program(odd_even_interaction, lambda r: [_normal(r, 7)], 0),
    Program(position_weighted_energy, lambda r: [_normal(r, 6)], 0),
    Program(row_weighted_norms, lambda r: [_normal(r, 4, 3), _normal(r, 4)], (0, 1)),
    Program(paired_log_ratio, lambda r: [_normal(r, 5), _normal(r, 5)], (0, 1)),
    Program(zip_rows_triplet,
            lambda r: [_normal(r, 3, 2), _normal(r, 3, 2), _normal(r, 3, 2)], (0, 1, 2)),
    # while loops
    Program(double_until_large, _double_args, 0),
    Program(capped_gradient_step,
            lambda r: _until(r, lambda r: [_normal(r, 3), _normal(r, 4, 3)], _capped_ok),
            (0, 1)),
    Program(babylonian_until_converged,
            lambda r: _until(r, lambda r: [_scalar(r, 2.0, 50.0)], _babylonian_ok), 0),
    Program(simulate_until_time, lambda r: [_normal(r, 4), _positive(r, 4)], (0, 1)),
    Program(grow_until_threshold,
            lambda r: _until(r, lambda r: [_positive(r, 5, low=0.2, high=1.0),
                                           _scalar(r, 0.05, 0.2)], _grow_ok), (0, 1)),
    # early return, break and continue
    Program(first_large_entry,
            lambda r: _until(r, _first_large_args, lambda x, w: _far(x, [3.0], 0.1)), (0, 1)),
    Program(early_return_on_negative_mean,
            lambda r: _until(r, lambda r: [_normal(r, 4), _normal(r, 4, 4, scale=0.6)],
                             lambda x, W: _far(np.mean(x), [0.0], 0.1)), (0, 1)),
    Program(first_close_pair,
            lambda r: _until(r, lambda r: [r.uniform(-1.0, 1.0, (5, 2))], _close_pair_ok), 0),
    Program(budgeted_energy,
            lambda r: _until(r, lambda r: [_normal(r, 6), _normal(r, 6)],
                             lambda x, w: _far(np.cumsum(x ** 2), [2.0], 0.05)), (0, 1)),
    Program(skip_negative_sqrt, lambda r: [_away(r, 7), _normal(r, 7)], (0, 1)),
    Program(off_diagonal_coupling, lambda r: [_normal(r, 4, 4), _normal(r, 4)], (0, 1)),
    # calls to helpers
    Program(leaky_network,
            lambda r: _until(r, lambda r: [_normal(r, 4, 3), _normal(r, 3)],
                             lambda W, x: _far(W @ x, [0.0], 0.1)), (0, 1)),
    Program(bump_mixture, lambda r: [_normal(r, 5), _normal(r, 3)], (0, 1)),
    Program(nested_helper_loss,
            lambda r: [_normal(r, 3), _normal(r, 5, 3), r.choice([-1.0, 1.0], 5)], (0, 1)),
    Program(nested_helper_with_loop, lambda r: [_normal(r, 7), _scalar(r, 0.3, 0.9)], (0, 1)),
    Program(polynomial_path_cost, lambda r: [_normal(r, 4), _normal(r, 5, scale=0.8)], (0, 1)),
    Program(clamped_regression,
            lambda r: _until(r, lambda r: [_normal(r, 3), _normal(r, 5, 3), _normal(r, 5)],
                             lambda w, X, y: _far(X @ w, [-1.0, 1.5], 0.05)), (0, 1, 2)),
    # lists
    Program(rnn_stacked_outputs,
            lambda r: [_normal(r, 3, 2, scale=0.5), _normal(r, 3, 3, scale=0.5),
                       _normal(r, 4, 2), _normal(r, 3)], (0, 1, 2, 3)),
    Program(sum_of_listed_terms, lambda r: [_normal(r, 6), _normal(r, 6)], (0, 1)),
    Program(appended_residuals,
            lambda r: [_positive(r, 2), np.linspace(0.0, 2.0, 6), _positive(r, 6)], (0, 2)),
    Program(comprehension_products, lambda r: [_normal(r, 6)], 0),
    Program(chain_energy_generator, lambda r: [_normal(r, 7)], 0),
    Program(row_scores_comprehension, lambda r: [_normal(r, 5, 3), _normal(r, 3)], (0, 1)),
    # loops that run zero times
    Program(loop_zero_iterations_constant_range, lambda r: [_normal(r, 4)], 0),
    Program(loop_zero_iterations_count_argument, lambda r: [_normal(r, 4), _normal(r, 4), 0],
            (0, 1)),
    Program(loop_zero_iterations_empty_rows, lambda r: [np.zeros((0, 3)), _normal(r, 3)], (0, 1)),
    Program(loop_zero_iterations_while_already_small, lambda r: [_normal(r, 4)], 0),
    Program(loop_zero_iterations_empty_generator, lambda r: [_normal(r, 5), 0], 0),
    Program(loop_zero_iterations_inner_range, lambda r: [_normal(r, 3, 3), _normal(r, 3)], (0, 1)),
    # branches in loops, loops in branches
    Program(alternating_sign_series, lambda r: [_normal(r, 7)], 0),
    Program(sign_dependent_updates, lambda r: [_away(r, 6), _away(r, 6)], (0, 1)),
    Program(loops_inside_branches,
            lambda r: _until(r, lambda r: [_normal(r, 5), int(r.integers(1, 5))],
                             lambda x, steps: _far(np.mean(x), [0.0], 0.1)), 0),
]
