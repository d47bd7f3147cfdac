#!/usr/bin/python3
"""Fits the polynomial coefficients of kernels/codegen/llvm/vector_math.cc.

Each polynomial is the Chebyshev interpolant (mpmath.chebyfit at 60 digits) of
the function named in vector_math.h, on the reduced range given there, rounded
to float or double; the printed constants are pasted into vector_math.cc with
their fit errors. Needs mpmath (Debian: python3-mpmath):

    /usr/bin/python3 tools/fit_vector_math_coefficients.py
"""
import mpmath as mp, struct
mp.mp.dps = 60
def to_float(v):
    return struct.unpack('f', struct.pack('f', float(v)))[0]
def cheb(f, a, b, deg):
    poly, err = mp.chebyfit(f, [a, b], deg+1, error=True)
    return [p for p in reversed(poly)], err
def emit(name, coeffs, is_float):
    vals = [to_float(c) if is_float else float(c) for c in coeffs]
    s = ', '.join(v.hex() for v in vals)
    print(f'constexpr double {name}[] = {{{s}}};')
ln2 = mp.log(2)
def q_exp(r):
    if abs(r) < mp.mpf('1e-25'): return mp.mpf(1)/2 + r/6
    return (mp.exp(r) - 1 - r) / r**2
def r_log(z):
    if z < mp.mpf('1e-40'): return mp.mpf(2)/3
    s = mp.sqrt(z); return (2*mp.atanh(s) - 2*s) / s / z
def p_tanh(z):
    if z < mp.mpf('1e-40'): return mp.mpf(-1)/3
    x = mp.sqrt(z); return (mp.tanh(x) - x) / x**3
def q_erf(z):
    if z < mp.mpf('1e-40'): return 2/mp.sqrt(mp.pi) - 1
    x = mp.sqrt(z); return mp.erf(x)/x - 1
smax = (mp.sqrt(2)-1)/(mp.sqrt(2)+1)
R = mp.mpf('0.35')
for is_float, suffix, dexp, dlog, dtanh, derf in [(True, 'Float', 5, 3, 5, 5), (False, 'Double', 10, 6, 12, 9)]:
    c, e = cheb(q_exp, -R, R, dexp); emit('kExpPoly' + suffix, c, is_float); print('// err', mp.nstr(e,3))
    c, e = cheb(r_log, 0, smax**2 * mp.mpf('1.0001'), dlog); emit('kLogPoly' + suffix, c, is_float); print('// err', mp.nstr(e,3))
    c, e = cheb(p_tanh, 0, mp.mpf('0.625')**2, dtanh); emit('kTanhPoly' + suffix, c, is_float); print('// err', mp.nstr(e,3))
    c, e = cheb(q_erf, 0, mp.mpf('0.25'), derf); emit('kErfSmallPoly' + suffix, c, is_float); print('// err', mp.nstr(e,3))
# erf tail intervals
for is_float, suffix, lo, hi, target in [(True, 'Float', mp.mpf('0.5'), mp.mpf('4.0'), 2**-30), (False, 'Double', mp.mpf('0.5'), mp.mpf('6.0'), 2**-59)]:
    n = 4; w = (hi - lo) / n
    sets = []; degs = []
    for i in range(n):
        a = lo + w*i; b = a + w; c0 = (a + b) / 2
        for d in range(4, 40):
            c, e = cheb(lambda t: mp.erf(t + c0), -w/2, w/2, d)
            if e < target: break
        sets.append((c0, c, e)); degs.append(d)
    D = max(degs)
    print('// erf tail degrees', degs, 'width', w)
    print(f'constexpr double kErfTailCenters{suffix}[] = {{{", ".join(float(s[0]).hex() for s in sets)}}};')
    print(f'constexpr double kErfTailPoly{suffix}[][{D+1}] = {{')
    for c0, _, _ in sets:
        c, e = cheb(lambda t: mp.erf(t + c0), -w/2, w/2, D)
        vals = [to_float(x) if is_float else float(x) for x in c]
        print('  {' + ', '.join(v.hex() for v in vals) + '},  // err ' + mp.nstr(e, 3))
    print('};')
print('ln2 float', to_float(ln2).hex(), to_float(ln2 - to_float(ln2)).hex())
print('ln2 double', float(ln2).hex(), float(ln2 - mp.mpf(float(ln2))).hex())
print('log2e', to_float(1/ln2).hex(), float(1/ln2).hex())
