/* fp_x86_6.h - x86-64 Montgomery multiplication for 6-limb moduli (BLS12-381 Fq) with
 * MULX/ADCX/ADOX (BMI2 + ADX). Included by fp_template.h when the compiler targets those
 * extensions; the portable C twin is FP_FN(mul_c) and the tests check one against the other.
 *
 * Same scheme as fp_x86_4.h: CIOS, no-carry variant, two interleaved carry chains per row,
 * seven accumulator registers r8..r14 rotating one place per word. rax/rbx hold the
 * product halves; a zero in memory feeds the final carries. The result (< 2p) is reduced by
 * writing t - p to o and then restoring t with CMOVC when the subtraction borrowed.
 */
#define FPX6_MUL_FIRST(t0, t1, t2, t3, t4, t5, A)                                                 \
    "mov 0(%[b]), %%rdx\n\t"                                                                       \
    "mulx 0(%[a]), %%" #t0 ", %%" #t1 "\n\t"                                                      \
    "mulx 8(%[a]), %%rax, %%" #t2 "\n\t"                                                          \
    "add %%rax, %%" #t1 "\n\t"                                                                     \
    "mulx 16(%[a]), %%rax, %%" #t3 "\n\t"                                                         \
    "adc %%rax, %%" #t2 "\n\t"                                                                     \
    "mulx 24(%[a]), %%rax, %%" #t4 "\n\t"                                                         \
    "adc %%rax, %%" #t3 "\n\t"                                                                     \
    "mulx 32(%[a]), %%rax, %%" #t5 "\n\t"                                                         \
    "adc %%rax, %%" #t4 "\n\t"                                                                     \
    "mulx 40(%[a]), %%rax, %%" #A "\n\t"                                                          \
    "adc %%rax, %%" #t5 "\n\t"                                                                     \
    "adc $0, %%" #A "\n\t"

#define FPX6_MAC(off, tj, tj1)                                                                    \
    "mulx " #off "(%[a]), %%rax, %%rbx\n\t"                                                       \
    "adox %%rax, %%" #tj "\n\t"                                                                    \
    "adcx %%rbx, %%" #tj1 "\n\t"

#define FPX6_MUL_NEXT(i, t0, t1, t2, t3, t4, t5, A)                                               \
    "mov " #i "*8(%[b]), %%rdx\n\t"                                                                \
    "xor %%eax, %%eax\n\t"                                                                         \
    FPX6_MAC(0, t0, t1) FPX6_MAC(8, t1, t2) FPX6_MAC(16, t2, t3) FPX6_MAC(24, t3, t4)              \
    FPX6_MAC(32, t4, t5)                                                                           \
    "mulx 40(%[a]), %%rax, %%" #A "\n\t"                                                          \
    "adox %%rax, %%" #t5 "\n\t"                                                                    \
    "adcx %[zero], %%" #A "\n\t"                                                                   \
    "adox %[zero], %%" #A "\n\t"

#define FPX6_RMAC(p, tj, tj1)                                                                     \
    "mulx " p ", %%rax, %%rbx\n\t"                                                                 \
    "adcx %%rax, %%" #tj "\n\t"                                                                    \
    "adox %%rbx, %%" #tj1 "\n\t"

/* t0 becomes 0 and the caller rotates names: (t1, ..., t5, A) is the new t */
#define FPX6_RED(t0, t1, t2, t3, t4, t5, A)                                                       \
    "mov %%" #t0 ", %%rdx\n\t"                                                                     \
    "imul %[inv], %%rdx\n\t"                                                                       \
    "xor %%eax, %%eax\n\t"                                                                         \
    FPX6_RMAC("%[p0]", t0, t1) FPX6_RMAC("%[p1]", t1, t2) FPX6_RMAC("%[p2]", t2, t3)               \
    FPX6_RMAC("%[p3]", t3, t4) FPX6_RMAC("%[p4]", t4, t5) FPX6_RMAC("%[p5]", t5, A)                \
    "adcx %[zero], %%" #A "\n\t"

#define FPX6_SUB(op, off, p, t)                                                                   \
    "mov %%" #t ", %%rax\n\t"                                                                      \
    op " " p ", %%rax\n\t"                                                                         \
    "mov %%rax, " #off "(%[o])\n\t"

#define FPX6_KEEP(off, t)                                                                         \
    "mov " #off "(%[o]), %%rax\n\t"                                                                \
    "cmovc %%" #t ", %%rax\n\t"                                                                    \
    "mov %%rax, " #off "(%[o])\n\t"

static inline void FP_FN(mul)(FP_T *o, const FP_T *a, const FP_T *b)
{
    static const uint64_t inv = FP_INV, zero = 0;
    __asm__ volatile(
        FPX6_MUL_FIRST(r8, r9, r10, r11, r12, r13, r14)
        FPX6_RED(r8, r9, r10, r11, r12, r13, r14)
        FPX6_MUL_NEXT(1, r9, r10, r11, r12, r13, r14, r8)
        FPX6_RED(r9, r10, r11, r12, r13, r14, r8)
        FPX6_MUL_NEXT(2, r10, r11, r12, r13, r14, r8, r9)
        FPX6_RED(r10, r11, r12, r13, r14, r8, r9)
        FPX6_MUL_NEXT(3, r11, r12, r13, r14, r8, r9, r10)
        FPX6_RED(r11, r12, r13, r14, r8, r9, r10)
        FPX6_MUL_NEXT(4, r12, r13, r14, r8, r9, r10, r11)
        FPX6_RED(r12, r13, r14, r8, r9, r10, r11)
        FPX6_MUL_NEXT(5, r13, r14, r8, r9, r10, r11, r12)
        FPX6_RED(r13, r14, r8, r9, r10, r11, r12)
        /* t = (r14, r8, r9, r10, r11, r12) < 2p */
        FPX6_SUB("sub", 0, "%[p0]", r14) FPX6_SUB("sbb", 8, "%[p1]", r8)
        FPX6_SUB("sbb", 16, "%[p2]", r9) FPX6_SUB("sbb", 24, "%[p3]", r10)
        FPX6_SUB("sbb", 32, "%[p4]", r11) FPX6_SUB("sbb", 40, "%[p5]", r12)
        FPX6_KEEP(0, r14) FPX6_KEEP(8, r8) FPX6_KEEP(16, r9) FPX6_KEEP(24, r10)
        FPX6_KEEP(32, r11) FPX6_KEEP(40, r12)
        :
        : [o] "r"(o->l), [a] "r"(a->l), [b] "r"(b->l), [inv] "m"(inv), [zero] "m"(zero),
          [p0] "m"(FP_MOD[0]), [p1] "m"(FP_MOD[1]), [p2] "m"(FP_MOD[2]), [p3] "m"(FP_MOD[3]),
          [p4] "m"(FP_MOD[4]), [p5] "m"(FP_MOD[5])
        : "rax", "rbx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "cc", "memory");
}

#undef FPX6_MUL_FIRST
#undef FPX6_MAC
#undef FPX6_MUL_NEXT
#undef FPX6_RMAC
#undef FPX6_RED
#undef FPX6_SUB
#undef FPX6_KEEP
