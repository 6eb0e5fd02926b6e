/** A figure rounded to two decimals, as every bench reports ratios and seconds. */
export const round2 = (n: number) => Math.round(n * 100) / 100
