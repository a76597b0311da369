//! FP8 E4M3 ("fn": no infinities, 0x7f/0xff are NaN, max 448) scalar conversions: the port of
//! kernels/pybind11/csrc/fp8_e4m3.h used by the CPU backend. Round to nearest, ties to even,
//! saturating to +-448 (cuda_fp8.h's __NV_SATFINITE). No Python here.

pub const E4M3_MAX: f32 = 448.0;

/// 2^n for the exponents used here (a normal f32).
fn pow2(n: i32) -> f32 {
    f32::from_bits(((n + 127) as u32) << 23)
}

pub fn float_to_e4m3(f: f32) -> u8 {
    let sign: u8 = if f.is_sign_negative() { 0x80 } else { 0x00 };
    if f.is_nan() {
        return sign | 0x7f;
    }
    let a = f.abs();
    if a >= E4M3_MAX {
        return sign | 0x7e; // saturate (also +-inf)
    }
    if a < 0.015625 {
        // subnormal range, quantum 2^-9; a * 2^9 is exact. q == 8 is 2^-6, the code 0x08.
        let q = (a * 512.0).round_ties_even() as u8;
        return sign | q;
    }
    // a = m * 2^e with m in [0.5, 1) (frexp); a >= 2^-6 is a normal f32.
    let bits = a.to_bits();
    let e = ((bits >> 23) & 0xff) as i32 - 126;
    let m = f32::from_bits((bits & 0x007f_ffff) | (126 << 23));
    // a = (1 + k/8) * 2^(e-1): k = 16m - 8, exact in f32.
    let mut k = (m * 16.0 - 8.0).round_ties_even() as i32;
    let mut exp_field = (e - 1) + 7;
    if k == 8 {
        k = 0;
        exp_field += 1;
    }
    if exp_field > 15 || (exp_field == 15 && k == 7) {
        return sign | 0x7e;
    }
    sign | ((exp_field << 3) | k) as u8
}

pub fn e4m3_to_float(c: u8) -> f32 {
    let exp_field = ((c >> 3) & 0xf) as i32;
    let mant = (c & 0x7) as i32;
    let v = if exp_field == 15 && mant == 7 {
        f32::NAN
    } else if exp_field == 0 {
        mant as f32 * pow2(-9)
    } else {
        (1.0 + mant as f32 / 8.0) * pow2(exp_field - 7)
    };
    if c & 0x80 != 0 { -v } else { v }
}
