/* stacks_unwind.c — a small DWARF CFI unwinder for x86-64, used when libunwind is absent (the GPU
 * machine, most users' machines): glibc's backtrace() re-reads the DWARF call-frame information of
 * every frame on every call (about 5 µs at depth 24), far over the 2 µs budget.
 *
 * The rule that recovers a frame's caller depends only on its pc, so it is computed once per pc
 * from .eh_frame (found through .eh_frame_hdr's sorted table) and kept in a lock-free cache; the
 * steady state is a cache probe and two loads per frame. Only what compilers emit for ordinary code
 * is understood: CFA = rsp or rbp + offset, rbp saved at CFA + n, return address at CFA - 8.
 * Anything else (DWARF expressions, signal frames, a register other than rsp/rbp as the CFA)
 * makes gt_unwind_cfi return -1, and the caller falls back to backtrace() for that capture. */
#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "stacks_internal.h"

#define DW_REG_RBP 6
#define DW_REG_RSP 7
#define DW_REG_RA 16
#define RULE_CACHE 16384u /* pcs (power of two) */
#define MAX_FRAME_BYTES (1u << 24)
#define MAX_STACK_SPAN (256ull << 20) /* a CFA this far above the first sp is not a stack */

/* ---------------------------------------------------------------- rules and their cache */

typedef struct frame_rule {
    bool cfa_is_rbp; /* else rsp */
    bool rbp_saved;  /* rbp restored from CFA + rbp_off */
    bool end;        /* the return address is undefined: outermost frame */
    uint32_t cfa_off;
    int32_t rbp_off;
} frame_rule;

typedef struct rule_slot {
    _Atomic uint64_t pc;
    _Atomic uint64_t packed; /* rule in the low 32 bits, a hash of pc in the high 32 */
} rule_slot;
static rule_slot g_rules[RULE_CACHE];

static uint32_t pc_hash(uint64_t pc)
{
    uint64_t h = pc * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32) | 1u; /* never 0: 0 marks an empty slot */
}

static uint32_t rule_pack(const frame_rule *r)
{
    /* bits 0-23 cfa_off, 24 cfa_is_rbp, 25 rbp_saved, 26 end, 27-31 -rbp_off/8 */
    return (r->cfa_off & 0xffffffu) | (uint32_t)r->cfa_is_rbp << 24 | (uint32_t)r->rbp_saved << 25 |
           (uint32_t)r->end << 26 | (uint32_t)((-r->rbp_off / 8) & 31) << 27;
}

static frame_rule rule_unpack(uint32_t p)
{
    return (frame_rule){.cfa_off = p & 0xffffffu,
                        .cfa_is_rbp = (p >> 24) & 1,
                        .rbp_saved = (p >> 25) & 1,
                        .end = (p >> 26) & 1,
                        .rbp_off = -(int32_t)((p >> 27) & 31) * 8};
}

static bool rule_cached(uint64_t pc, frame_rule *out)
{
    rule_slot *s = &g_rules[(pc ^ pc >> 14) & (RULE_CACHE - 1)];
    uint64_t packed = atomic_load_explicit(&s->packed, memory_order_acquire);
    if (atomic_load_explicit(&s->pc, memory_order_acquire) != pc ||
        (uint32_t)(packed >> 32) != pc_hash(pc))
        return false; /* empty, another pc, or torn by a concurrent writer */
    *out = rule_unpack((uint32_t)packed);
    return true;
}

static void rule_store(uint64_t pc, const frame_rule *r)
{
    rule_slot *s = &g_rules[(pc ^ pc >> 14) & (RULE_CACHE - 1)];
    atomic_store_explicit(&s->pc, pc, memory_order_release);
    atomic_store_explicit(&s->packed, (uint64_t)pc_hash(pc) << 32 | rule_pack(r),
                          memory_order_release);
}

/* ---------------------------------------------------------------- DWARF reading */

typedef struct cursor {
    const uint8_t *p, *end;
    bool bad;
} cursor;

static uint64_t uleb(cursor *c)
{
    uint64_t v = 0;
    for (int shift = 0; c->p < c->end && shift < 64; shift += 7) {
        uint8_t b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    c->bad = true;
    return 0;
}

static int64_t sleb(cursor *c)
{
    int64_t v = 0;
    int shift = 0;
    uint8_t b = 0;
    do {
        if (c->p >= c->end || shift >= 64) {
            c->bad = true;
            return 0;
        }
        b = *c->p++;
        v |= (int64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= -((int64_t)1 << shift);
    return v;
}

static bool take(cursor *c, void *dst, size_t n)
{
    if ((size_t)(c->end - c->p) < n) {
        c->bad = true;
        return false;
    }
    memcpy(dst, c->p, n);
    c->p += n;
    return true;
}

/* A DW_EH_PE-encoded pointer; datarel is relative to data_base (.eh_frame_hdr). */
static uint64_t encoded(cursor *c, uint8_t enc, uint64_t data_base)
{
    if (enc == 0xff) /* DW_EH_PE_omit */
        return 0;
    uint64_t field = (uint64_t)(uintptr_t)c->p, v = 0;
    switch (enc & 0x0f) {
    case 0x00:
        take(c, &v, 8);
        break;
    case 0x01:
        v = uleb(c);
        break;
    case 0x02: {
        uint16_t x = 0;
        take(c, &x, 2);
        v = x;
        break;
    }
    case 0x03: {
        uint32_t x = 0;
        take(c, &x, 4);
        v = x;
        break;
    }
    case 0x04:
        take(c, &v, 8);
        break;
    case 0x09:
        v = (uint64_t)sleb(c);
        break;
    case 0x0a: {
        int16_t x = 0;
        take(c, &x, 2);
        v = (uint64_t)(int64_t)x;
        break;
    }
    case 0x0b: {
        int32_t x = 0;
        take(c, &x, 4);
        v = (uint64_t)(int64_t)x;
        break;
    }
    case 0x0c:
        take(c, &v, 8);
        break;
    default:
        c->bad = true;
        return 0;
    }
    switch (enc & 0x70) {
    case 0x00:
        break;
    case 0x10:
        v += field;
        break; /* pcrel */
    case 0x30:
        v += data_base;
        break; /* datarel */
    default:
        c->bad = true;
        return 0;
    }
    if (enc & 0x80) /* indirect */
        c->bad = true;
    return v;
}

/* ---------------------------------------------------------------- finding the FDE */

typedef struct eh_lookup {
    uint64_t pc;
    const uint8_t *hdr; /* .eh_frame_hdr of the module holding pc */
} eh_lookup;

static int find_eh_hdr(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    eh_lookup *l = arg;
    const ElfW(Phdr) *eh = NULL;
    bool inside = false;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && l->pc >= start && l->pc < start + ph->p_memsz)
            inside = true;
        else if (ph->p_type == PT_GNU_EH_FRAME)
            eh = ph;
    }
    if (!inside)
        return 0;
    if (eh)
        l->hdr = (const uint8_t *)(info->dlpi_addr + eh->p_vaddr);
    return 1;
}

/* The FDE covering pc through .eh_frame_hdr's binary-search table. */
static const uint8_t *find_fde(uint64_t pc)
{
    eh_lookup l = {pc, NULL};
    dl_iterate_phdr(find_eh_hdr, &l);
    if (!l.hdr || l.hdr[0] != 1 || l.hdr[3] != 0x3b) /* version 1, table datarel|sdata4 */
        return NULL;
    cursor c = {l.hdr + 4, l.hdr + 4 + 16, false};
    encoded(&c, l.hdr[1], (uint64_t)(uintptr_t)l.hdr); /* eh_frame_ptr, unused */
    uint64_t count = encoded(&c, l.hdr[2], (uint64_t)(uintptr_t)l.hdr);
    if (c.bad || count == 0 || count > (1u << 26))
        return NULL;
    const int32_t *table = (const int32_t *)c.p; /* pairs: initial location, FDE address */
    uint64_t base = (uint64_t)(uintptr_t)l.hdr;
    size_t lo = 0, hi = count;
    while (lo < hi) { /* first entry starting above pc */
        size_t mid = lo + (hi - lo) / 2;
        if (base + (int64_t)table[2 * mid] <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    return (const uint8_t *)(uintptr_t)(base + (int64_t)table[2 * (lo - 1) + 1]);
}

/* ---------------------------------------------------------------- running the CFA program */

typedef struct cfa_state {
    int cfa_reg;
    int64_t cfa_off;
    int rbp_how; /* 0 same value, 1 saved at CFA + rbp_off */
    int64_t rbp_off;
    int ra_how; /* 1 saved at CFA + ra_off, 2 undefined */
    int64_t ra_off;
} cfa_state;

typedef struct cie_info {
    uint64_t code_align;
    int64_t data_align;
    uint8_t fde_enc;
    bool has_z; /* FDEs carry augmentation data */
    const uint8_t *insns, *insns_end;
} cie_info;

static void set_reg_offset(cfa_state *s, uint64_t reg, int64_t off)
{
    if (reg == DW_REG_RBP) {
        s->rbp_how = 1;
        s->rbp_off = off;
    } else if (reg == DW_REG_RA) {
        s->ra_how = 1;
        s->ra_off = off;
    }
}

/* Runs insns until the location passes pc. False on anything not understood. */
static bool run_cfa(cursor c, const cie_info *cie, uint64_t loc, uint64_t pc, cfa_state *s,
                    const cfa_state *initial)
{
    cfa_state stack[4];
    int depth = 0;
    while (c.p < c.end && !c.bad) {
        uint8_t op = *c.p++;
        uint64_t reg, delta = 0;
        switch (op & 0xc0) {
        case 0x40:
            delta = op & 0x3f;
            goto advance;
        case 0x80:
            set_reg_offset(s, op & 0x3f, (int64_t)uleb(&c) * cie->data_align);
            continue;
        case 0xc0:
            reg = op & 0x3f;
            goto restore;
        }
        switch (op) {
        case 0x00:
            continue; /* nop */
        case 0x02: {
            uint8_t d = 0;
            take(&c, &d, 1);
            delta = d;
            goto advance;
        }
        case 0x03: {
            uint16_t d = 0;
            take(&c, &d, 2);
            delta = d;
            goto advance;
        }
        case 0x04: {
            uint32_t d = 0;
            take(&c, &d, 4);
            delta = d;
            goto advance;
        }
        case 0x05:
            reg = uleb(&c);
            set_reg_offset(s, reg, (int64_t)uleb(&c) * cie->data_align);
            continue;
        case 0x06:
            reg = uleb(&c);
            goto restore;
        case 0x07: /* undefined */
            reg = uleb(&c);
            if (reg == DW_REG_RA)
                s->ra_how = 2;
            else if (reg == DW_REG_RBP)
                return false;
            continue;
        case 0x08: /* same value */
            reg = uleb(&c);
            if (reg == DW_REG_RBP)
                s->rbp_how = 0;
            continue;
        case 0x09: /* register */
            reg = uleb(&c);
            uleb(&c);
            if (reg == DW_REG_RBP || reg == DW_REG_RA)
                return false;
            continue;
        case 0x0a:
            if (depth == 4)
                return false;
            stack[depth++] = *s;
            continue;
        case 0x0b: /* restore_state: every rule, the CFA's included */
            if (depth == 0)
                return false;
            *s = stack[--depth];
            continue;
        case 0x0c:
            s->cfa_reg = (int)uleb(&c);
            s->cfa_off = (int64_t)uleb(&c);
            continue;
        case 0x0d:
            s->cfa_reg = (int)uleb(&c);
            continue;
        case 0x0e:
            s->cfa_off = (int64_t)uleb(&c);
            continue;
        case 0x10:
        case 0x16: /* expression, val_expression: fine unless for rbp or RA */
            reg = uleb(&c);
            if (reg == DW_REG_RBP || reg == DW_REG_RA)
                return false;
            {
                uint64_t n = uleb(&c);
                if ((uint64_t)(c.end - c.p) < n)
                    return false;
                c.p += n;
            }
            continue;
        case 0x11:
            reg = uleb(&c);
            set_reg_offset(s, reg, sleb(&c) * cie->data_align);
            continue;
        case 0x12:
            s->cfa_reg = (int)uleb(&c);
            s->cfa_off = sleb(&c) * cie->data_align;
            continue;
        case 0x13:
            s->cfa_off = sleb(&c) * cie->data_align;
            continue;
        case 0x14:
        case 0x15: /* val_offset(_sf) */
            reg = uleb(&c);
            if (op == 0x14)
                uleb(&c);
            else
                sleb(&c);
            if (reg == DW_REG_RBP || reg == DW_REG_RA)
                return false;
            continue;
        case 0x2e:
            uleb(&c);
            continue; /* GNU_args_size */
        default:
            return false; /* def_cfa_expression, set_loc, vendor ops */
        }
    advance:
        loc += delta * cie->code_align;
        if (loc > pc)
            return !c.bad;
        continue;
    restore:
        if (!initial)
            return false; /* restore inside the CIE itself */
        if (reg == DW_REG_RBP) {
            s->rbp_how = initial->rbp_how;
            s->rbp_off = initial->rbp_off;
        } else if (reg == DW_REG_RA) {
            s->ra_how = initial->ra_how;
            s->ra_off = initial->ra_off;
        }
    }
    return !c.bad;
}

static bool parse_cie(const uint8_t *p, cie_info *out)
{
    uint32_t len;
    memcpy(&len, p, 4);
    if (len == 0 || len == 0xffffffffu)
        return false;
    cursor c = {p + 4, p + 4 + len, false};
    uint32_t id = 1;
    uint8_t version = 0;
    take(&c, &id, 4);
    take(&c, &version, 1);
    if (id != 0 || (version != 1 && version != 3))
        return false;
    const char *aug = (const char *)c.p;
    size_t aug_len = strnlen(aug, (size_t)(c.end - c.p));
    c.p += aug_len + 1;
    if (aug[0] != '\0' && aug[0] != 'z')
        return false;
    out->code_align = uleb(&c);
    out->data_align = sleb(&c);
    uint64_t ra_reg = version == 1 ? (c.p < c.end ? *c.p++ : 0) : uleb(&c);
    if (ra_reg != DW_REG_RA)
        return false;
    out->fde_enc = 0; /* absptr */
    out->has_z = aug[0] == 'z';
    if (out->has_z) {
        uint64_t n = uleb(&c);
        cursor a = {c.p, c.p + n, false};
        if ((uint64_t)(c.end - c.p) < n)
            return false;
        for (size_t i = 1; i < aug_len; i++) {
            uint8_t enc = 0;
            switch (aug[i]) {
            case 'R':
                take(&a, &out->fde_enc, 1);
                break;
            case 'L':
                take(&a, &enc, 1);
                break;
            case 'P':
                take(&a, &enc, 1);
                encoded(&a, enc & 0x7f, 0);
                break;
            case 'S':
                return false; /* a signal frame: the registers are in a ucontext */
            default:
                return false;
            }
        }
        if (a.bad)
            return false;
        c.p += n;
    }
    out->insns = c.p;
    out->insns_end = c.end;
    return !c.bad;
}

/* The rule for the frame executing at pc (already "pc - 1" for return addresses). */
static bool compute_rule(uint64_t pc, frame_rule *out)
{
    const uint8_t *fde = find_fde(pc);
    if (!fde)
        return false;
    uint32_t len;
    int32_t cie_off;
    memcpy(&len, fde, 4);
    memcpy(&cie_off, fde + 4, 4);
    if (len == 0 || len == 0xffffffffu || cie_off <= 0)
        return false;
    cie_info cie;
    if (!parse_cie(fde + 4 - cie_off, &cie))
        return false;
    cursor c = {fde + 8, fde + 4 + len, false};
    uint64_t start = encoded(&c, cie.fde_enc, 0);
    uint64_t range = encoded(&c, cie.fde_enc & 0x0f, 0);
    if (c.bad || pc < start || pc >= start + range)
        return false;
    if (cie.has_z) { /* skip the FDE's augmentation data (its LSDA pointer) */
        uint64_t aug_n = uleb(&c);
        if ((uint64_t)(c.end - c.p) < aug_n)
            return false;
        c.p += aug_n;
    }
    cfa_state s = {.cfa_reg = DW_REG_RSP, .cfa_off = 8, .ra_how = 1, .ra_off = -8};
    cursor ci = {cie.insns, cie.insns_end, false};
    if (!run_cfa(ci, &cie, 0, UINT64_MAX, &s, NULL))
        return false;
    cfa_state initial = s;
    if (!run_cfa(c, &cie, start, pc, &s, &initial))
        return false;
    if (s.cfa_reg != DW_REG_RSP && s.cfa_reg != DW_REG_RBP)
        return false;
    if (s.cfa_off <= 0 || s.cfa_off >= MAX_FRAME_BYTES)
        return false;
    if (s.ra_how == 1 && s.ra_off != -8)
        return false;
    if (s.rbp_how == 1 && (s.rbp_off >= 0 || s.rbp_off < -248 || s.rbp_off % 8))
        return false;
    *out = (frame_rule){.cfa_is_rbp = s.cfa_reg == DW_REG_RBP,
                        .rbp_saved = s.rbp_how == 1,
                        .end = s.ra_how == 2,
                        .cfa_off = (uint32_t)s.cfa_off,
                        .rbp_off = (int32_t)s.rbp_off};
    return true;
}

/* ---------------------------------------------------------------- the walk */

__attribute__((noinline)) int gt_unwind_cfi(void **pcs, int max)
{
    uint64_t pc, sp, bp;
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                     : "=r"(pc), "=r"(sp), "=r"(bp));
    const uint64_t sp0 = sp;
    uint64_t lookup = pc; /* the first pc is exact; the others are return addresses */
    int n = 0;
    while (n < max) {
        frame_rule r;
        if (!rule_cached(lookup, &r)) {
            if (!compute_rule(lookup, &r))
                return n > 0 ? n : -1; /* a frame we cannot read: keep the frames above it */
            rule_store(lookup, &r);
        }
        if (r.end)
            return n;
        uint64_t cfa = (r.cfa_is_rbp ? bp : sp) + r.cfa_off;
        if (cfa <= sp || cfa - sp0 > MAX_STACK_SPAN || (cfa & 7))
            return n > 0 ? n : -1; /* not a stack any more: stop with what we have */
        uint64_t ra = *(const uint64_t *)(cfa - 8);
        if (r.rbp_saved)
            bp = *(const uint64_t *)(cfa + r.rbp_off);
        sp = cfa;
        if (ra == 0)
            return n;
        pcs[n++] = (void *)(uintptr_t)ra;
        lookup = ra - 1;
    }
    return n;
}
