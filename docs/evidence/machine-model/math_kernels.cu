// One kernel per math function, o[i] = f(a[i], b[i]); read by fastpath_mix.py.
#define K(name, expr)                                                                      \
    extern "C" __global__ void name(const float* __restrict__ a, const float* __restrict__ b, \
                                    float* __restrict__ o, int n) {                        \
        int i = blockIdx.x * blockDim.x + threadIdx.x;                                     \
        if (i < n) { float x = a[i]; float y = b[i]; o[i] = (expr); }                      \
    }
#define KD(name, expr)                                                                     \
    extern "C" __global__ void name(const double* __restrict__ a, const double* __restrict__ b, \
                                    double* __restrict__ o, int n) {                       \
        int i = blockIdx.x * blockDim.x + threadIdx.x;                                     \
        if (i < n) { double x = a[i]; double y = b[i]; o[i] = (expr); }                    \
    }
#define KI(name, expr)                                                                     \
    extern "C" __global__ void name(const int* __restrict__ a, const int* __restrict__ b,  \
                                    int* __restrict__ o, int n) {                          \
        int i = blockIdx.x * blockDim.x + threadIdx.x;                                     \
        if (i < n) { int x = a[i]; int y = b[i]; o[i] = (expr); }                          \
    }
#define KL(name, expr)                                                                     \
    extern "C" __global__ void name(const long long* __restrict__ a, const long long* __restrict__ b, \
                                    long long* __restrict__ o, int n) {                    \
        int i = blockIdx.x * blockDim.x + threadIdx.x;                                     \
        if (i < n) { long long x = a[i]; long long y = b[i]; o[i] = (expr); }              \
    }
K(k_copy, x + 0 * y)
K(k_sinf, sinf(x) + 0 * y)
K(k_fast_sinf, __sinf(x) + 0 * y)
K(k_cosf, cosf(x) + 0 * y)
K(k_expf, expf(x) + 0 * y)
K(k_fast_expf, __expf(x) + 0 * y)
K(k_exp2f, exp2f(x) + 0 * y)
K(k_logf, logf(x) + 0 * y)
K(k_fast_logf, __logf(x) + 0 * y)
K(k_tanhf, tanhf(x) + 0 * y)
K(k_erff, erff(x) + 0 * y)
K(k_powf, powf(x, y))
K(k_fast_powf, __powf(x, y))
K(k_div, x / y)
K(k_fast_div, __fdividef(x, y))
K(k_sqrtf, sqrtf(x) + 0 * y)
K(k_rsqrtf, rsqrtf(x) + 0 * y)
K(k_sigmoid, 1.0f / (1.0f + expf(-x)) + 0 * y)
K(k_fast_sigmoid, __fdividef(1.0f, 1.0f + __expf(-x)) + 0 * y)
K(k_poly_sin, x * (1.0f + x * x * (-1.6666667e-1f + x * x * (8.3333333e-3f + x * x * (-1.9841270e-4f + x * x * 2.7557319e-6f)))) + 0 * y)
KD(k_d_copy, x + 0 * y)
KD(k_d_sin, sin(x) + 0 * y)
KD(k_d_exp, exp(x) + 0 * y)
KD(k_d_div, x / y)
KI(k_i_copy, x)
KI(k_i_div, x / y)
KI(k_i_mod, x % y)
KI(k_i_div_const7, x / 7 + 0 * y)
KI(k_i_div_pow2, x / 8 + 0 * y)
KI(k_i_udiv_pow2_shift, (int)((unsigned)x >> 3) + 0 * y)
KL(k_l_copy, x)
KL(k_l_div, x / y)
KL(k_l_mul_add, x * y + x)
KI(k_i_mul_add, x * y + x)
