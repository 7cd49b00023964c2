/* textfmt.h — how every text output writes what a person reads (issue 32): a duration in the unit
 * that suits that figure, a count as an integer, a share without "-0", a long C++ name shortened
 * between its tokens, prose wrapped to the terminal. report, record, diff, the verdict and the
 * advice print through these, so a figure reads the same wherever it appears. JSON keeps its raw
 * numbers and full names; only the text is shaped here.
 *
 * The const char * results live in rotating static buffers (16 slots, like gt_fmt's): use them
 * in one printf, or copy them. */
#ifndef GT_TEXTFMT_H
#define GT_TEXTFMT_H

#include <stddef.h>
#include <stdio.h>

#define GT_TEXT_WIDTH_DEFAULT 100 /* when out is not a terminal and COLUMNS is unset */

/* The width lines are fitted to: COLUMNS when set to a number, else the terminal's width when out
 * is a terminal, else 100; never below 40. */
int gt_text_width(FILE *out);
/* Text composed in memory and fitted afterwards (gt_fit_text) still takes the terminal's width:
 * the caller measures it once and sets it here; 0 goes back to measuring. */
void gt_text_width_set(int width);

/* Columns the UTF-8 text takes on a terminal (one per code point: all gputrace prints is
 * narrow). */
size_t gt_text_cols(const char *s);

/* A duration given in ms, in the unit that suits it: "0 µs", "2.5 µs", "850 µs", "4.33 ms",
 * "44.3 ms", "813 ms", "12.5 s", "125 s" (µs under 1 ms, s from 10 s, three significant digits);
 * a figure that rounds to zero never carries a minus sign. */
const char *gt_dur(double ms);
/* Same, for nanoseconds. */
const char *gt_dur_ns(double ns);

/* A count, rounded to an integer: "2727", never "2727.0" or "-0". */
const char *gt_count(double n);
/* A count with its noun, plural when it is not 1: gt_counted(3, "step", "steps") = "3 steps". */
const char *gt_counted(double n, const char *one, const char *many);

/* A mean of counts ("calls per step"): an integer when it is one ("3"), else one decimal ("0.1",
 * "2.5"). */
const char *gt_mean(double n);

/* A change with its sign ("+8.0 pts", "-3.5%"); one that rounds to zero has none ("0.0%"). */
const char *gt_signed(double v, int decimals, const char *unit);

/* A percentage: "45%", "3.5%", "0.4%", "<0.1%" for a small positive share, "0%". */
const char *gt_pct(double pct);

/* Name shaping. A demangled C++ name is shortened step by step, each only when the previous did
 * not bring it within max columns: namespaces inside template and parameter lists dropped,
 * parameter lists as "(…)", nested template arguments as "<…>", the template arguments as the one
 * that says what the kernel is ("<…CUDAFunctor_add<…>…>"), and last the middle of the name
 * between two token boundaries ("cutlass_80_tensorop_…_tn_align4"). Nothing is ever cut inside
 * an identifier or a number unless one single token is wider than max. */
#define GT_NAME_KERNEL 1u /* a kernel: drop "void " and the parameter list at once */
#define GT_NAME_TAIL 2u   /* not C++: keep the head, cut the end at a token boundary ("…") */
size_t gt_short_name_into(const char *name, size_t max, unsigned flags, char *buf, size_t cap);
const char *gt_short_name(const char *name, size_t max, unsigned flags);

/* Prints text wrapped to width columns: the first line starts with first, the others with next
 * (indents); lines break at spaces, and a word wider than a line is shortened with
 * gt_short_name rather than cut. Returns the number of lines printed. */
int gt_wrap(FILE *out, const char *first, const char *next, const char *text, int width);

/* Composed text (lines ending in '\n') printed with each line fitted to width: a longer line wraps
 * at spaces, its continuation under the text after its label ("  steady    ..."), its list marker
 * ("  1. ") or its indent; colour escapes take no column. Tables are fitted by gt_table before,
 * so this is for prose. Returns the number of lines printed. */
int gt_fit_text(FILE *out, const char *text, size_t len, int width);

/* compose(ctx, mem) writes into memory while gt_text_width gives width (tables fit themselves
 * to it); the text comes back fitted (gt_fit_text), malloc'd, with its line count in *lines.
 * NULL when out of memory. */
char *gt_fitted(void (*compose)(void *ctx, FILE *mem), void *ctx, int width, int *lines);
/* The same, printed to out at out's width (gt_text_width). Returns the lines, -1 out of memory. */
int gt_print_fitted(FILE *out, void (*compose)(void *ctx, FILE *mem), void *ctx);

#endif
