/* fp_x86_4.h - x86-64 Montgomery multiplication for 4-limb moduli (BN254 Fr/Fq,
 * BLS12-381 Fr) with MULX/ADCX/ADOX (BMI2 + ADX). Included by fp_template.h when the
 * compiler targets those extensions; the portable C twin is FP_FN(mul_c) and the tests
 * check one against the other.
 *
 * Same algorithm as the C code: CIOS, no-carry variant (the top limb of p is below 2^63 - 1).
 * Per word b[i]: t += a*b[i] as two interleaved carry chains (ADOX for low halves, ADCX for
 * high halves), then m = t0*(-p^-1) and t = (t + m*p)/2^64 the same way. The five
 * accumulator registers r8..r12 rotate so that the shift by one word costs no moves.
 * The result (< 2p) is reduced with a branch-free subtract and CMOVC.
 */
#define FPX4_MUL_FIRST(t0, t1, t2, t3, A)                                                         \
    "mov 0(%[b]), %%rdx\n\t"                                                                       \
    "mulx 0(%[a]), %%" #t0 ", %%" #t1 "\n\t"                                                      \
    "mulx 8(%[a]), %%r13, %%" #t2 "\n\t"                                                          \
    "add %%r13, %%" #t1 "\n\t"                                                                     \
    "mulx 16(%[a]), %%r13, %%" #t3 "\n\t"                                                         \
    "adc %%r13, %%" #t2 "\n\t"                                                                     \
    "mulx 24(%[a]), %%r13, %%" #A "\n\t"                                                          \
    "adc %%r13, %%" #t3 "\n\t"                                                                     \
    "adc $0, %%" #A "\n\t"

#define FPX4_MUL_NEXT(i, t0, t1, t2, t3, A)                                                       \
    "mov " #i "*8(%[b]), %%rdx\n\t"                                                                \
    "xor %%r15d, %%r15d\n\t"                                                                       \
    "mulx 0(%[a]), %%r13, %%r14\n\t"                                                              \
    "adox %%r13, %%" #t0 "\n\t"                                                                    \
    "adcx %%r14, %%" #t1 "\n\t"                                                                    \
    "mulx 8(%[a]), %%r13, %%r14\n\t"                                                              \
    "adox %%r13, %%" #t1 "\n\t"                                                                    \
    "adcx %%r14, %%" #t2 "\n\t"                                                                    \
    "mulx 16(%[a]), %%r13, %%r14\n\t"                                                             \
    "adox %%r13, %%" #t2 "\n\t"                                                                    \
    "adcx %%r14, %%" #t3 "\n\t"                                                                    \
    "mulx 24(%[a]), %%r13, %%" #A "\n\t"                                                          \
    "adox %%r13, %%" #t3 "\n\t"                                                                    \
    "adcx %%r15, %%" #A "\n\t"                                                                     \
    "adox %%r15, %%" #A "\n\t"

/* t0 becomes 0 and the caller rotates names: (t1, t2, t3, A) is the new t */
#define FPX4_RED(t0, t1, t2, t3, A)                                                               \
    "mov %%" #t0 ", %%rdx\n\t"                                                                     \
    "imul %[inv], %%rdx\n\t"                                                                       \
    "xor %%r15d, %%r15d\n\t"                                                                       \
    "mulx %[p0], %%r13, %%r14\n\t"                                                                 \
    "adcx %%r13, %%" #t0 "\n\t"                                                                    \
    "adox %%r14, %%" #t1 "\n\t"                                                                    \
    "mulx %[p1], %%r13, %%r14\n\t"                                                                 \
    "adcx %%r13, %%" #t1 "\n\t"                                                                    \
    "adox %%r14, %%" #t2 "\n\t"                                                                    \
    "mulx %[p2], %%r13, %%r14\n\t"                                                                 \
    "adcx %%r13, %%" #t2 "\n\t"                                                                    \
    "adox %%r14, %%" #t3 "\n\t"                                                                    \
    "mulx %[p3], %%r13, %%r14\n\t"                                                                 \
    "adcx %%r13, %%" #t3 "\n\t"                                                                    \
    "adox %%r14, %%" #A "\n\t"                                                                     \
    "adcx %%r15, %%" #A "\n\t"

static inline void FP_FN(mul)(FP_T *o, const FP_T *a, const FP_T *b)
{
    static const uint64_t inv = FP_INV;
    __asm__ volatile(
        FPX4_MUL_FIRST(r8, r9, r10, r11, r12)
        FPX4_RED(r8, r9, r10, r11, r12)
        FPX4_MUL_NEXT(1, r9, r10, r11, r12, r8)
        FPX4_RED(r9, r10, r11, r12, r8)
        FPX4_MUL_NEXT(2, r10, r11, r12, r8, r9)
        FPX4_RED(r10, r11, r12, r8, r9)
        FPX4_MUL_NEXT(3, r11, r12, r8, r9, r10)
        FPX4_RED(r11, r12, r8, r9, r10)
        /* t = (r12, r8, r9, r10) < 2p: subtract p, keep t when it borrowed */
        "mov %%r12, %%r13\n\t"
        "mov %%r8, %%r14\n\t"
        "mov %%r9, %%r15\n\t"
        "mov %%r10, %%rdx\n\t"
        "sub %[p0], %%r13\n\t"
        "sbb %[p1], %%r14\n\t"
        "sbb %[p2], %%r15\n\t"
        "sbb %[p3], %%rdx\n\t"
        "cmovc %%r12, %%r13\n\t"
        "cmovc %%r8, %%r14\n\t"
        "cmovc %%r9, %%r15\n\t"
        "cmovc %%r10, %%rdx\n\t"
        "mov %%r13, 0(%[o])\n\t"
        "mov %%r14, 8(%[o])\n\t"
        "mov %%r15, 16(%[o])\n\t"
        "mov %%rdx, 24(%[o])\n\t"
        :
        : [o] "r"(o->l), [a] "r"(a->l), [b] "r"(b->l), [inv] "m"(inv), [p0] "m"(FP_MOD[0]),
          [p1] "m"(FP_MOD[1]), [p2] "m"(FP_MOD[2]), [p3] "m"(FP_MOD[3])
        : "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "cc", "memory");
}

/* One Montgomery reduction round on the 8-word square r8..r15: m = w[i]*(-p^-1), w += m*p*2^(64i)
 * (low halves on the ADCX chain, high halves on ADOX), then the carry runs up to w7. The
 * partial sums stay below p^2 + R p < R^2, so nothing leaves w7. */
#define FPX4_SQR_RED(wi, w1, w2, w3, w4, prop)                                                    \
    "mov %%" #wi ", %%rdx\n\t"                                                                     \
    "imul %[inv], %%rdx\n\t"                                                                       \
    "xor %%ecx, %%ecx\n\t"                                                                         \
    "mulx %[p0], %%rax, %%rbx\n\t"                                                                 \
    "adcx %%rax, %%" #wi "\n\t"                                                                    \
    "adox %%rbx, %%" #w1 "\n\t"                                                                    \
    "mulx %[p1], %%rax, %%rbx\n\t"                                                                 \
    "adcx %%rax, %%" #w1 "\n\t"                                                                    \
    "adox %%rbx, %%" #w2 "\n\t"                                                                    \
    "mulx %[p2], %%rax, %%rbx\n\t"                                                                 \
    "adcx %%rax, %%" #w2 "\n\t"                                                                    \
    "adox %%rbx, %%" #w3 "\n\t"                                                                    \
    "mulx %[p3], %%rax, %%rbx\n\t"                                                                 \
    "adcx %%rax, %%" #w3 "\n\t"                                                                    \
    "adox %%rcx, %%rbx\n\t"                                                                        \
    "adcx %%rbx, %%" #w4 "\n\t" prop

/* o = a^2 R^-1 mod p: the 8-word square (6 cross products, doubled, plus 4 squares: 10 MULX
 * instead of 16), then four reduction rounds. */
static inline void FP_FN(sqr)(FP_T *o, const FP_T *a)
{
    static const uint64_t inv = FP_INV;
    __asm__ volatile(
        /* cross products a_i a_j (i < j) into w1..w6 */
        "mov 0(%[a]), %%rdx\n\t"
        "mulx 8(%[a]), %%r9, %%r10\n\t"
        "mulx 16(%[a]), %%rax, %%r11\n\t"
        "add %%rax, %%r10\n\t"
        "mulx 24(%[a]), %%rax, %%r12\n\t"
        "adc %%rax, %%r11\n\t"
        "adc $0, %%r12\n\t"
        "mov 8(%[a]), %%rdx\n\t"
        "mulx 16(%[a]), %%rax, %%rbx\n\t"
        "mulx 24(%[a]), %%rcx, %%r13\n\t"
        "add %%rax, %%r11\n\t"
        "adc %%rbx, %%r12\n\t"
        "adc $0, %%r13\n\t"
        "add %%rcx, %%r12\n\t"
        "adc $0, %%r13\n\t"
        "mov 16(%[a]), %%rdx\n\t"
        "mulx 24(%[a]), %%rax, %%r14\n\t"
        "add %%rax, %%r13\n\t"
        "adc $0, %%r14\n\t"
        /* double w1..w6 into w1..w7 */
        "mov $0, %%r15\n\t"
        "add %%r9, %%r9\n\t"
        "adc %%r10, %%r10\n\t"
        "adc %%r11, %%r11\n\t"
        "adc %%r12, %%r12\n\t"
        "adc %%r13, %%r13\n\t"
        "adc %%r14, %%r14\n\t"
        "adc $0, %%r15\n\t"
        /* add the squares a_i^2 at words 2i, 2i+1 */
        "mov 0(%[a]), %%rdx\n\t"
        "mulx %%rdx, %%r8, %%rax\n\t"
        "add %%rax, %%r9\n\t"
        "mov 8(%[a]), %%rdx\n\t"
        "mulx %%rdx, %%rax, %%rbx\n\t"
        "adc %%rax, %%r10\n\t"
        "adc %%rbx, %%r11\n\t"
        "mov 16(%[a]), %%rdx\n\t"
        "mulx %%rdx, %%rax, %%rbx\n\t"
        "adc %%rax, %%r12\n\t"
        "adc %%rbx, %%r13\n\t"
        "mov 24(%[a]), %%rdx\n\t"
        "mulx %%rdx, %%rax, %%rbx\n\t"
        "adc %%rax, %%r14\n\t"
        "adc %%rbx, %%r15\n\t"
        /* reduce */
        FPX4_SQR_RED(r8, r9, r10, r11, r12, "adc $0, %%r13\n\tadc $0, %%r14\n\tadc $0, %%r15\n\t")
        FPX4_SQR_RED(r9, r10, r11, r12, r13, "adc $0, %%r14\n\tadc $0, %%r15\n\t")
        FPX4_SQR_RED(r10, r11, r12, r13, r14, "adc $0, %%r15\n\t")
        FPX4_SQR_RED(r11, r12, r13, r14, r15, "")
        /* t = (r12, r13, r14, r15) < 2p */
        "mov %%r12, %%rax\n\t"
        "mov %%r13, %%rbx\n\t"
        "mov %%r14, %%rcx\n\t"
        "mov %%r15, %%rdx\n\t"
        "sub %[p0], %%rax\n\t"
        "sbb %[p1], %%rbx\n\t"
        "sbb %[p2], %%rcx\n\t"
        "sbb %[p3], %%rdx\n\t"
        "cmovc %%r12, %%rax\n\t"
        "cmovc %%r13, %%rbx\n\t"
        "cmovc %%r14, %%rcx\n\t"
        "cmovc %%r15, %%rdx\n\t"
        "mov %%rax, 0(%[o])\n\t"
        "mov %%rbx, 8(%[o])\n\t"
        "mov %%rcx, 16(%[o])\n\t"
        "mov %%rdx, 24(%[o])\n\t"
        :
        : [o] "r"(o->l), [a] "r"(a->l), [inv] "m"(inv), [p0] "m"(FP_MOD[0]), [p1] "m"(FP_MOD[1]),
          [p2] "m"(FP_MOD[2]), [p3] "m"(FP_MOD[3])
        : "rax", "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "cc",
          "memory");
}
#define FP_HAVE_SQR 1

#undef FPX4_SQR_RED
#undef FPX4_MUL_FIRST
#undef FPX4_MUL_NEXT
#undef FPX4_RED
