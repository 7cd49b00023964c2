/* textfmt.c — durations, counts, shares, short names and wrapped lines for the text outputs
 * (textfmt.h). Why one place: the report printed "~0.00 ms", "-0.000 ms", "2727.0 blocking calls"
 * and names cut mid-token ("cudnn_frontend::Exe") because each output chose its own printf. */
#include "textfmt.h"
#include "util.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define SLOTS 16
#define SLOT_BYTES 2048
#define ELLIPSIS "\xe2\x80\xa6" /* "…" */

static char *slot(void)
{
    static char bufs[SLOTS][SLOT_BYTES];
    static unsigned next;
    return bufs[next++ % SLOTS];
}

static const char *slot_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *slot_fmt(const char *fmt, ...)
{
    char *b = slot();
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, SLOT_BYTES, fmt, ap);
    va_end(ap);
    return b;
}

static int width_set;

void gt_text_width_set(int width)
{
    width_set = width;
}

int gt_text_width(FILE *out)
{
    if (width_set > 0)
        return width_set;
    const char *cols = getenv("COLUMNS");
    long w = 0;
    if (cols && *cols) {
        char *end;
        w = strtol(cols, &end, 10);
        if (*end)
            w = 0;
    }
    struct winsize ws;
    if (w <= 0 && out && isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0)
        w = ws.ws_col;
    if (w <= 0)
        w = GT_TEXT_WIDTH_DEFAULT;
    return w < 40 ? 40 : w > 4096 ? 4096 : (int)w;
}

size_t gt_text_cols(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80; /* continuation bytes take no column */
    return n;
}

/* ------------------------------------------------------------------ numbers */

/* "%.*f" of v, without a minus sign when the printed value is zero ("-0.00" from -0.001). */
static const char *fixed(double v, int decimals, const char *unit)
{
    double scale = pow(10, decimals);
    if (fabs(v) * scale < 0.5)
        v = 0;
    return slot_fmt("%.*f%s", decimals, v, unit);
}

const char *gt_dur(double ms)
{
    if (!isfinite(ms))
        return "?";
    double a = fabs(ms), us = ms * 1e3;
    if (a * 1e3 < 9.95)
        return fixed(us, 1, " \xc2\xb5s");
    if (a * 1e3 < 999.5)
        return fixed(us, 0, " \xc2\xb5s");
    if (a < 9.995)
        return fixed(ms, 2, " ms");
    if (a < 99.95)
        return fixed(ms, 1, " ms");
    if (a < 9999.5)
        return fixed(ms, 0, " ms");
    if (a < 99950)
        return fixed(ms / 1e3, 1, " s");
    return fixed(ms / 1e3, 0, " s");
}

const char *gt_dur_ns(double ns)
{
    return gt_dur(ns / 1e6);
}

const char *gt_count(double n)
{
    if (!isfinite(n))
        return "?";
    return fixed(n, 0, "");
}

const char *gt_counted(double n, const char *one, const char *many)
{
    const char *num = gt_count(n);
    return slot_fmt("%s %s", num, strcmp(num, "1") ? many : one);
}

const char *gt_signed(double v, int decimals, const char *unit)
{
    if (!isfinite(v))
        return "?";
    const char *t = fixed(v, decimals, unit);
    return v > 0 && fabs(v) * pow(10, decimals) >= 0.5 ? slot_fmt("+%s", t) : t;
}

const char *gt_mean(double n)
{
    if (!isfinite(n))
        return "?";
    return fabs(n - round(n)) < 0.05 ? fixed(n, 0, "") : fixed(n, 1, "");
}

const char *gt_pct(double pct)
{
    if (!isfinite(pct))
        return "?";
    double a = fabs(pct);
    if (a == 0)
        return "0%";
    if (a < 0.05)
        return pct > 0 ? "<0.1%" : "-<0.1%";
    if (a < 9.95 && fabs(pct * 10 - round(pct) * 10) >= 0.5) /* 3.5%, but 5% rather than 5.0% */
        return fixed(pct, 1, "%");
    return fixed(pct, 0, "%");
}

/* ------------------------------------------------------------------ names */

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* The operator symbol after "operator" at s (s points after the word): its length, so that
 * "operator()" or "operator<<" are never read as a parameter list or template arguments. */
static size_t operator_len(const char *s)
{
    static const char *const ops[] = {
        "()", "[]", "<<=", ">>=", "<<", ">>", "<=>", "<=", ">=", "->", "==", "!=", "<",
        ">",  "+",  "-",   "*",   "/",  "%",  "&",   "|",  "^",  "~",  "!",  "=",  ","};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strncmp(s, ops[i], strlen(ops[i])))
            return strlen(ops[i]);
    return 0;
}

/* Copies "operator<sym>" when s starts with it; returns the bytes consumed (0: not there). */
static size_t copy_operator(const char *s, char **o)
{
    if (strncmp(s, "operator", 8) || ident_char(s[8]))
        return 0;
    size_t n = 8 + operator_len(s + 8);
    memcpy(*o, s, n);
    *o += n;
    return n;
}

/* The index just after the bracket matching s[0] ('<' or '('), counting both kinds; the end of
 * the string when unbalanced. */
static size_t match_close(const char *s)
{
    int depth = 0;
    size_t i = 0;
    for (; s[i]; i++) {
        size_t op = 0;
        if (!strncmp(s + i, "operator", 8) && (i == 0 || !ident_char(s[i - 1])))
            op = 8 + operator_len(s + i + 8);
        if (op) {
            i += op - 1;
            continue;
        }
        if (s[i] == '<' || s[i] == '(')
            depth++;
        else if ((s[i] == '>' || s[i] == ')') && --depth == 0)
            return i + 1;
    }
    return i;
}

static void put(char **o, const char *s, size_t n)
{
    memcpy(*o, s, n);
    *o += n;
}

/* Step 0 (kernels): "void " and the parameter list go; step 1 (any name): a parameter list at
 * the top level reads "(…)". A '(' opens one only after a name or a '>' ("(anonymous namespace)"
 * follows "::"). */
static void shape_params(const char *in, char *out, int drop)
{
    char *o = out;
    const char *s = in;
    if (drop && !strncmp(s, "void ", 5))
        s += 5;
    int tdepth = 0;
    const char *op_end = NULL; /* just after "operator<<": a '(' there opens the parameters */
    while (*s) {
        size_t op = (s == in || !ident_char(s[-1])) ? copy_operator(s, &o) : 0;
        if (op) {
            s += op;
            op_end = s;
            continue;
        }
        if (*s == '<')
            tdepth++;
        else if (*s == '>' && tdepth > 0)
            tdepth--;
        if (*s == '(' && tdepth == 0 && s > in &&
            (ident_char(s[-1]) || s[-1] == '>' || s == op_end)) {
            size_t n = match_close(s);
            if (!drop)
                put(&o, n > 2 ? "(" ELLIPSIS ")" : "()", n > 2 ? 5 : 2);
            s += n;
            continue;
        }
        *o++ = *s++;
    }
    *o = 0;
}

/* The length of a lambda's or a call operator's suffix at s ("::{lambda(float)#1}",
 * "::operator()() const"): PyTorch's kernels nest them in their template arguments. */
static size_t lambda_suffix(const char *s)
{
    static const char *const ops[] = {"::operator()() const", "::operator()()"};
    if (!strncmp(s, "::{lambda", 9)) {
        const char *e = strchr(s, '}');
        return e ? (size_t)(e - s) + 1 : 0;
    }
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strncmp(s, ops[i], strlen(ops[i])))
            return strlen(ops[i]);
    return 0;
}

/* Step 2: "ns::" dropped inside template arguments and parameter lists, "(anonymous
 * namespace)::" and lambdas ("::{lambda()#1}::operator()() const") everywhere: the kernel's own
 * namespace stays, its arguments' go. */
static void drop_inner_namespaces(const char *in, char *out)
{
    static const char ANON[] = "(anonymous namespace)::";
    char *o = out;
    const char *s = in;
    int depth = 0;
    while (*s) {
        if (!strncmp(s, ANON, sizeof ANON - 1)) {
            s += sizeof ANON - 1;
            continue;
        }
        size_t lambda = lambda_suffix(s);
        if (lambda) {
            s += lambda;
            continue;
        }
        size_t op = (s == in || !ident_char(s[-1])) ? copy_operator(s, &o) : 0;
        if (op) {
            s += op;
            continue;
        }
        if (depth > 0 && ident_char(*s) && (s == in || !ident_char(s[-1]))) {
            const char *e = s;
            while (ident_char(*e))
                e++;
            if (e[0] == ':' && e[1] == ':') {
                s = e + 2;
                continue;
            }
        }
        if (*s == '<' || *s == '(')
            depth++;
        else if ((*s == '>' || *s == ')') && depth > 0)
            depth--;
        *o++ = *s++;
    }
    *o = 0;
}

/* Step 3: template arguments below the first level read "<…>", parameter lists inside the
 * arguments "(…)". */
static void collapse_nested(const char *in, char *out)
{
    char *o = out;
    const char *s = in;
    int tdepth = 0;
    while (*s) {
        size_t op = (s == in || !ident_char(s[-1])) ? copy_operator(s, &o) : 0;
        if (op) {
            s += op;
            continue;
        }
        if (*s == '<' && tdepth >= 1) {
            put(&o, "<" ELLIPSIS ">", 5);
            s += match_close(s);
            continue;
        }
        if (*s == '(' && tdepth >= 1 && s > in && (ident_char(s[-1]) || s[-1] == '>')) {
            size_t n = match_close(s); /* a function's parameters inside an argument */
            put(&o, n > 2 ? "(" ELLIPSIS ")" : "()", n > 2 ? 5 : 2);
            s += n;
            continue;
        }
        if (*s == '<')
            tdepth++;
        else if (*s == '>' && tdepth > 0)
            tdepth--;
        *o++ = *s++;
    }
    *o = 0;
}

/* A template argument that says nothing of the kernel on its own: a number, a builtin type, a
 * boolean, an enum cast "(T)2". */
static int plain_arg(const char *a, size_t n)
{
    static const char *const words[] = {
        "void",     "bool",          "char",      "short",  "int",      "long",
        "unsigned", "signed",        "float",     "double", "half",     "true",
        "false",    "__half",        "float2",    "float4", "int2",     "int4",
        "double2",  "__nv_bfloat16", "c10::Half", "Half",   "BFloat16", "c10::BFloat16"};
    while (n && *a == ' ')
        a++, n--;
    while (n && a[n - 1] == ' ')
        n--;
    if (!n || a[0] == '(' || isdigit((unsigned char)a[0]) || a[0] == '-')
        return 1;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == n && !strncmp(words[i], a, n))
            return 1;
    return !strncmp(a, "unsigned ", 9) || !strncmp(a, "long ", 5);
}

/* Where the values begin among plain arguments "<float, float, float2, 128, true, 1>": after the
 * last type word (1 when there is none). */
static size_t first_value_arg(const char *s, size_t end)
{
    size_t start = 1, from = 1;
    int depth = 0;
    for (size_t i = 1; i < end; i++) {
        char c = s[i];
        int close = i == end - 1;
        if (c == '<' || c == '(')
            depth++;
        else if ((c == '>' || c == ')') && !close)
            depth--;
        if ((c == ',' && depth == 0) || close) {
            const char *a = s + start;
            while (*a == ' ')
                a++;
            if (!isdigit((unsigned char)*a) && *a != '-' && *a != '(' && strncmp(a, "true", 4) &&
                strncmp(a, "false", 5))
                from = i + 1; /* a type word: the values start after it */
            start = i + 1;
        }
    }
    while (from < end - 1 && s[from] == ' ')
        from++;
    return from < end - 1 ? from : 1;
}

/* Step 4: the first level of template arguments reduced to the first one that is not plain:
 * "vectorized_elementwise_kernel<…CUDAFunctor_add<…>…>". All plain: "<…>". */
static void keep_telling_arg(const char *in, char *out)
{
    char *o = out;
    const char *s = in;
    while (*s) {
        size_t op = (s == in || !ident_char(s[-1])) ? copy_operator(s, &o) : 0;
        if (op) {
            s += op;
            continue;
        }
        if (*s != '<') {
            *o++ = *s++;
            continue;
        }
        size_t end = match_close(s), start = 1, chosen = 0, chosen_n = 0, before = 0;
        int depth = 0, after = 0;
        for (size_t i = 1; i < end; i++) {
            char c = s[i];
            int close = i == end - 1;
            if (c == '<' || c == '(')
                depth++;
            else if ((c == '>' || c == ')') && !close)
                depth--;
            if ((c == ',' && depth == 0) || close) {
                if (chosen_n)
                    after = 1;
                else if (!plain_arg(s + start, i - start)) {
                    chosen = start, chosen_n = i - start;
                } else {
                    before = 1;
                }
                start = i + 1;
            }
        }
        *o++ = '<';
        if (!chosen_n) { /* all plain: the values (128, true) tell variants apart, types do not */
            size_t from = first_value_arg(s, end);
            if (from > 1)
                put(&o, ELLIPSIS, 3);
            put(&o, s + from, end - 1 - from);
        } else {
            while (chosen_n && s[chosen] == ' ')
                chosen++, chosen_n--;
            if (before)
                put(&o, ELLIPSIS, 3);
            put(&o, s + chosen, chosen_n);
            if (after)
                put(&o, ELLIPSIS, 3);
        }
        *o++ = '>';
        s += end;
    }
    *o = 0;
}

/* A position where the text may be cut: between two tokens (before or after a character that is
 * not part of an identifier), never inside a UTF-8 sequence. */
static int boundary(const char *s, size_t i, size_t len)
{
    if (i == 0 || i >= len)
        return 1;
    if (((unsigned char)s[i] & 0xC0) == 0x80)
        return 0;
    int a = isalnum((unsigned char)s[i - 1]) || (unsigned char)s[i - 1] >= 0x80;
    int b = isalnum((unsigned char)s[i]) || (unsigned char)s[i] >= 0x80;
    return !a || !b;
}

/* The byte index where the first `cols` columns of s end. */
static size_t bytes_for_cols(const char *s, size_t cols)
{
    size_t i = 0, c = 0;
    while (s[i]) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (c == cols)
                break;
            c++;
        }
        i++;
    }
    return i;
}

/* Step 5: the middle of the name gives way, cut at token boundaries: a head of about 60% of
 * what fits, "…", and a tail. A head token wider than that is cut (the one case of a cut
 * inside a token: a single identifier wider than max). */
static void elide_middle(const char *in, size_t max, char *out)
{
    size_t len = strlen(in), cols = gt_text_cols(in);
    if (cols <= max || max < 2) {
        memcpy(out, in, len + 1);
        return;
    }
    size_t head_cols = (max - 1) * 6 / 10;
    size_t h = bytes_for_cols(in, head_cols);
    while (h > 0 && !boundary(in, h, len))
        h--;
    while (h > 0 && (in[h - 1] == ' ' || in[h - 1] == ','))
        h--;
    if (h == 0) /* the first token alone is wider than the head */
        h = bytes_for_cols(in, head_cols);
    size_t used = 0; /* the head's columns */
    for (size_t i = 0; i < h; i++)
        used += ((unsigned char)in[i] & 0xC0) != 0x80;
    size_t t = bytes_for_cols(in, cols - (max - 1 - used));
    while (t < len && !boundary(in, t, len))
        t++;
    while (t < len && in[t] == ' ')
        t++;
    memcpy(out, in, h);
    memcpy(out + h, ELLIPSIS, 3);
    memcpy(out + h + 3, in + t, len - t + 1);
}

/* The head that fits in max - 1 columns, cut at a token boundary, then "…". */
static void elide_tail(const char *in, size_t max, char *out)
{
    size_t len = strlen(in);
    if (gt_text_cols(in) <= max || max < 2) {
        memcpy(out, in, len + 1);
        return;
    }
    size_t h = bytes_for_cols(in, max - 1), hard = h;
    while (h > 0 && !boundary(in, h, len))
        h--;
    while (h > 0 && strchr(" ,;:", in[h - 1]))
        h--;
    if (h == 0)
        h = hard;
    memcpy(out, in, h);
    memcpy(out + h, ELLIPSIS, 4);
}

/* Step 5 for a name with template arguments: the name proper is what tells most, so the
 * arguments give way first (their end cut at a token boundary); only when the name alone does not
 * fit does its middle go. */
static void elide_name(const char *in, size_t max, char *out)
{
    size_t len = strlen(in), open = 0;
    for (size_t i = 0; i < len && !open; i++) {
        if (!strncmp(in + i, "operator", 8) && (i == 0 || !ident_char(in[i - 1])))
            i += 8 + operator_len(in + i + 8) - 1;
        else if (in[i] == '<')
            open = i + 1;
        else if (in[i] == '(')
            break;
    }
    if (!open || gt_text_cols(in) <= max) {
        elide_middle(in, max, out);
        return;
    }
    size_t close = open - 1 + match_close(in + open - 1); /* just after the '>' */
    size_t head = gt_text_cols(in) - gt_text_cols(in + open);
    size_t tail = gt_text_cols(in + close) + 1;
    if (close > len || close < open + 1 || head + tail + 4 > max) {
        elide_middle(in, max, out);
        return;
    }
    char *args = gt_xmalloc(close - open + 4), *short_args = gt_xmalloc(close - open + 8);
    memcpy(args, in + open, close - 1 - open);
    args[close - 1 - open] = 0;
    elide_tail(args, max - head - tail, short_args);
    snprintf(out, len + 16, "%.*s%s%s", (int)open, in, short_args, in + close - 1);
    free(args);
    free(short_args);
}

size_t gt_short_name_into(const char *name, size_t max, unsigned flags, char *buf, size_t cap)
{
    if (!cap)
        return 0;
    if (!name)
        name = "";
    size_t len = strlen(name);
    /* The steps only shrink a name, except that "(x)" may become "(…)": 2 bytes per bracket. */
    char *a = gt_xmalloc(2 * len + 16), *b = gt_xmalloc(2 * len + 16);
    memcpy(a, name, len + 1);
    if (flags & GT_NAME_TAIL) {
        elide_tail(a, max, b);
        memcpy(a, b, strlen(b) + 1);
        max = (size_t)-1; /* nothing more to do */
    }
    if (flags & GT_NAME_KERNEL) {
        shape_params(a, b, 1);
        memcpy(a, b, strlen(b) + 1);
    }
    void (*const steps[])(const char *, char *) = {drop_inner_namespaces, collapse_nested,
                                                   keep_telling_arg};
    if (gt_text_cols(a) > max && !(flags & GT_NAME_KERNEL)) {
        shape_params(a, b, 0);
        memcpy(a, b, strlen(b) + 1);
    }
    for (size_t i = 0; i < sizeof steps / sizeof steps[0] && gt_text_cols(a) > max; i++) {
        steps[i](a, b);
        memcpy(a, b, strlen(b) + 1);
    }
    elide_name(a, max, b);
    size_t n = strlen(b);
    if (n >= cap) { /* never leave half a UTF-8 sequence */
        n = cap - 1;
        while (n > 0 && ((unsigned char)b[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(buf, b, n);
    buf[n] = 0;
    free(a);
    free(b);
    return n;
}

const char *gt_short_name(const char *name, size_t max, unsigned flags)
{
    char *b = slot();
    gt_short_name_into(name, max, flags, b, SLOT_BYTES);
    return b;
}

/* ------------------------------------------------------------------ wrapping */

int gt_wrap(FILE *out, const char *first, const char *next, const char *text, int width)
{
    size_t first_cols = gt_text_cols(first), next_cols = gt_text_cols(next);
    size_t avail = (size_t)width > first_cols + 10 ? (size_t)width - first_cols : 10;
    size_t used = 0;
    int lines = 1;
    fputs(first, out);
    const char *s = text ? text : "";
    while (*s) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        size_t n = strcspn(s, " ");
        char word[SLOT_BYTES];
        snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word - 1 ? n : sizeof word - 1), s);
        s += n;
        size_t wcols = gt_text_cols(word);
        if (used && used + 1 + wcols > avail) {
            fputc('\n', out);
            fputs(next, out);
            lines++;
            avail = (size_t)width > next_cols + 10 ? (size_t)width - next_cols : 10;
            used = 0;
        }
        if (wcols > avail) { /* a word wider than a line: shortened between its tokens */
            gt_short_name_into(word, avail, 0, word, sizeof word);
            wcols = gt_text_cols(word);
        }
        fprintf(out, "%s%s", used ? " " : "", word);
        used += (used ? 1 : 0) + wcols;
    }
    fputc('\n', out);
    return lines;
}

/* ------------------------------------------------------------------ fitting composed text */

/* Columns of a line segment, colour escapes ("\033[1;31m") taking none. */
static size_t visible_cols(const char *s, size_t n)
{
    size_t cols = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\033') {
            while (i < n && s[i] != 'm')
                i++;
            continue;
        }
        cols += ((unsigned char)s[i] & 0xC0) != 0x80;
    }
    return cols;
}

/* Where a wrapped line's continuation starts: under the text after a label ("  steady    44 ms":
 * the label, then two spaces or more), after a list marker ("  1. ", "  - "), else under the
 * line's own indent. */
static size_t continuation_indent(const char *line, size_t n)
{
    size_t lead = 0;
    while (lead < n && line[lead] == ' ')
        lead++;
    for (size_t i = lead; i + 1 < n && i < lead + 18; i++)
        if (line[i] == ' ' && line[i + 1] == ' ') {
            size_t j = i;
            while (j < n && line[j] == ' ')
                j++;
            return j < n ? visible_cols(line, j) : lead;
        }
    size_t m = lead;
    while (m < n && line[m] >= '0' && line[m] <= '9')
        m++;
    if (m > lead && m + 1 < n && line[m] == '.' && line[m + 1] == ' ')
        return visible_cols(line, m + 2);
    if (lead + 1 < n && line[lead] == '-' && line[lead + 1] == ' ')
        return lead + 2;
    size_t w = lead; /* "  warning: ...": under the text after the word that ends in ':' */
    while (w < n && w < lead + 16 && line[w] != ' ')
        w++;
    if (w > lead + 1 && w < n && line[w - 1] == ':' && line[w] == ' ')
        return visible_cols(line, w + 1);
    return lead;
}

/* A unit after a number ("11.4 ms", "7.8 GB/s"): never the first word of a wrapped line. */
static int unit_word(const char *w, size_t n)
{
    static const char *const units[] = {"ms", "\xc2\xb5s", "s",    "ns",   "B",      "KB",     "MB",
                                        "GB", "GiB",       "GB/s", "MB/s", "TFLOPS", "ms/step"};
    while (n && strchr(",;:).", w[n - 1]))
        n--;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i]) == n && !strncmp(units[i], w, n))
            return 1;
    return 0;
}

/* The end of the word at line[i..n), the unit after a number glued on. */
static size_t word_end(const char *line, size_t i, size_t n)
{
    size_t w = i;
    while (w < n && line[w] != ' ')
        w++;
    if (w > i && isdigit((unsigned char)line[w - 1]) && w + 1 < n && line[w] == ' ' &&
        line[w + 1] != ' ') {
        size_t u = w + 1;
        while (u < n && line[u] != ' ')
            u++;
        if (unit_word(line + w + 1, u - w - 1))
            return u;
    }
    return w;
}

/* One line of composed text, wrapped at spaces to width; a word wider than a line is shortened
 * between its tokens (textfmt.h); escape sequences are kept whole. */
static int fit_line(FILE *out, const char *line, size_t n, int width)
{
    if (visible_cols(line, n) <= (size_t)width) {
        fwrite(line, 1, n, out);
        fputc('\n', out);
        return 1;
    }
    size_t indent = continuation_indent(line, n);
    if (indent + 20 > (size_t)width)
        indent = 4;
    size_t i = 0, used = 0, spaces = 0;
    int lines = 1, first = 1;
    while (i < n && line[i] == ' ')
        i++;
    fwrite(line, 1, i, out);
    used = i;
    while (i < n) {
        size_t w = word_end(line, i, n);
        size_t wcols = visible_cols(line + i, w - i);
        if (!first && used + spaces + wcols > (size_t)width) {
            fprintf(out, "\n%*s", (int)indent, "");
            used = indent;
            lines++;
        } else if (!first) {
            fprintf(out, "%*s", (int)spaces, ""); /* the line's own spacing (aligned labels) */
            used += spaces;
        }
        first = 0;
        if (used + wcols > (size_t)width && !memchr(line + i, '\033', w - i)) {
            char word[SLOT_BYTES];
            snprintf(word, sizeof word, "%.*s", (int)(w - i), line + i);
            size_t room = (size_t)width > used + 8 ? (size_t)width - used : 8;
            gt_short_name_into(word, room, 0, word, sizeof word);
            fputs(word, out);
            used += gt_text_cols(word);
        } else {
            fwrite(line + i, 1, w - i, out);
            used += wcols;
        }
        for (i = w, spaces = 0; i < n && line[i] == ' '; i++)
            spaces++;
    }
    fputc('\n', out);
    return lines;
}

int gt_fit_text(FILE *out, const char *text, size_t len, int width)
{
    int lines = 0;
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
        lines += fit_line(out, text + i, n, width);
        i += n + 1;
    }
    return lines;
}

char *gt_fitted(void (*compose)(void *ctx, FILE *mem), void *ctx, int width, int *lines)
{
    char *raw = NULL, *fit = NULL;
    size_t raw_len = 0, fit_len = 0;
    FILE *mem = open_memstream(&raw, &raw_len);
    if (!mem)
        return NULL;
    int saved = width_set;
    gt_text_width_set(width);
    compose(ctx, mem);
    fclose(mem);
    gt_text_width_set(saved);
    mem = open_memstream(&fit, &fit_len);
    int n = 0;
    if (mem) {
        n = gt_fit_text(mem, raw, raw_len, width);
        fclose(mem);
    }
    free(raw);
    if (lines)
        *lines = n;
    return fit;
}

int gt_print_fitted(FILE *out, void (*compose)(void *ctx, FILE *mem), void *ctx)
{
    int lines = 0;
    char *text = gt_fitted(compose, ctx, gt_text_width(out), &lines);
    if (!text)
        return -1;
    fputs(text, out);
    free(text);
    return lines;
}
