-- OptionPricing (FinPar): Monte-Carlo pricing of a financial contract.
-- Every Monte-Carlo iteration it (a parallel kernel) draws the Sobol point
-- number it + 1 (a gray code, then for each dimension the XOR of the
-- direction vectors the gray code's bits select: a kernel and a reduction
-- with an XOR operator), maps it through the inverse of the normal
-- distribution (Wichura's AS241 rational approximations), builds a
-- Brownian bridge per underlying in FinPar's bisection order (two
-- sequential loops of in-place updates), correlates the deltas and turns
-- them into prices by a multiplicative scan over the dates (Black-Scholes),
-- per model, and prices the contract (payoff 1, 2 or 3, as FinPar's three
-- datasets).
-- The payoffs are summed over the iterations and divided by their number.
--
-- What the port changes, and why:
-- * FUN has no bitwise operators: XOR and bit tests are computed with
--   `/` and `%` by powers of two (a 31-step loop for XOR).
-- * No functions or higher-order maps: everything is inlined, `map` is
--   `kernel`, a map over a column is a kernel over the transposed array,
--   and the scan of rows by `map2 (*)` is one scalar scan per underlying.
-- * FinPar's datasets are files; here the Sobol direction vectors and the
--   Brownian bridge's data come from sizes and a seed, and the market data
--   are inputs. Direction vectors: v[d][b] = m * 2^(num_bits-1-b) with
--   m = (2h + 1) % 2^(b+1) odd, h = hash(seed, d, b), where
--   z = (seed * 1000003 + d * 10007 + b * 101 + 12345) * 2862933555777941757
--   + 3037000493 (wrapping i64) and h = |(z / 1024) % 2^30|; such vectors
--   keep Sobol's property that every point but the 0th is non-zero (FinPar
--   ships Sobol's own). The bridge's indices are FinPar's, built by the
--   bisection below (the same bi, li, ri as FinPar's files: [5, 2, 1, 3, 4]
--   for 5 dates, [367, 183, 91, 45, 22, 11, 5, 2, 1, 3, 4, 8, ...] for
--   367); its weights come from the same formula as FinPar's, but with
--   date k at time k (FinPar's files use the contracts' calendar dates in
--   years: yearly for the medium contract, daily for the large one).
-- * Sizes are inputs: contract, iterations, models, dates, underlyings,
--   discounts, bits, seed, then the market data.
--
-- Datasets: three small cases (FinPar's small and medium market data, a
-- few iterations; the third's payoffs depend on the bridge's order), then
-- FinPar's small (contract 1, 8388608 iterations, 1 date, 1 underlying),
-- medium (contract 2, 1048576 iterations, 5 dates, 3 underlyings) and
-- large (contract 3, 131072 iterations, 367 dates, 3 underlyings) sizes,
-- compiled, with random market data in [0, 1].
-- ==
-- input { 1i32 8i64 1i64 1i64 1i64 1i64 30i64 7i64
--         [[[1.0f32]]] [[[0.19f32]]] [[[-0.0276481f32]]]
--         [[3758.05f32]] [[0.9997817f32]] [[0.9805495f32]] }
-- output { [87.65393f32] }
-- input { 2i32 4i64 1i64 5i64 3i64 5i64 30i64 3i64
--         [[[1.0f32, 0.6f32, 0.8f32], [0.6f32, 0.8f32, 0.15f32], [0.8f32, 0.15f32, 0.5809475f32]]]
--         [[[0.19f32, 0.19f32, 0.15f32], [0.19f32, 0.19f32, 0.15f32], [0.19f32, 0.19f32, 0.15f32],
--           [0.19f32, 0.19f32, 0.15f32], [0.19f32, 0.19f32, 0.15f32]]]
--         [[[-0.0283492f32, 0.0178771f32, 0.0043097f32], [-0.0183841f32, -0.0044531f32, 0.0024264f32],
--           [-0.0172687f32, 0.0125639f32, 0.0094453f32], [-0.0144179f32, 0.0157411f32, 0.0125315f32],
--           [-0.0121497f32, 0.0182905f32, 0.0151125f32]]]
--         [[3758.05f32, 11840.0f32, 1200.0f32]] [[0.0f32]]
--         [[0.9797863f32, 0.9505748f32, 0.9214622f32, 0.8906693f32, 0.8588568f32]] }
-- output { [860.4225f32] }
-- input { 2i32 8i64 1i64 5i64 3i64 5i64 30i64 5i64
--         [[[1.0f32, 0.6f32, 0.8f32], [0.6f32, 0.8f32, 0.15f32], [0.8f32, 0.15f32, 0.5809475f32]]]
--         [[[0.19f32, 0.19f32, 0.15f32], [0.19f32, 0.19f32, 0.15f32], [0.19f32, 0.19f32, 0.15f32],
--           [0.19f32, 0.19f32, 0.15f32], [0.19f32, 0.19f32, 0.15f32]]]
--         [[[-0.0283492f32, 0.0178771f32, 0.0043097f32], [-0.0183841f32, -0.0044531f32, 0.0024264f32],
--           [-0.0172687f32, 0.0125639f32, 0.0094453f32], [-0.0144179f32, 0.0157411f32, 0.0125315f32],
--           [-0.0121497f32, 0.0182905f32, 0.0151125f32]]]
--         [[3758.05f32, 11840.0f32, 1200.0f32]] [[0.0f32]]
--         [[0.9797863f32, 0.9505748f32, 0.9214622f32, 0.8906693f32, 0.8588568f32]] }
-- output { [1002.61646f32] }
-- compiled random input { 1i32 8388608i64 1i64 1i64 1i64 1i64 30i64 1i64
--   [1][1][1]f32 [1][1][1]f32 [1][1][1]f32 [1][1]f32 [1][1]f32 [1][1]f32 }
-- compiled random input { 2i32 1048576i64 1i64 5i64 3i64 5i64 30i64 1i64
--   [1][3][3]f32 [1][5][3]f32 [1][5][3]f32 [1][3]f32 [1][1]f32 [1][5]f32 }
-- compiled random input { 3i32 131072i64 1i64 367i64 3i64 2i64 30i64 1i64
--   [1][3][3]f32 [1][367][3]f32 [1][367][3]f32 [1][3]f32 [1][1]f32 [1][2]f32 }
def main (contract: i32) (num_mc_it: int) (num_models: int) (num_dates: int)
         (num_und: int) (num_discts: int) (num_bits: int) (seed: int)
         (md_cs: [num_models][num_und][num_und]f32)
         (md_vols: [num_models][num_dates][num_und]f32)
         (md_drifts: [num_models][num_dates][num_und]f32)
         (md_sts: [num_models][num_und]f32)
         (md_detvals: [num_models][1]f32)
         (md_discts: [num_models][num_discts]f32) =
  -- Powers of two, 2^0 .. 2^num_bits.
  let (nb1: int) = num_bits + 1
  let (pow2: [nb1]int) = kernel b < nb1 do
        let (p: int) = loop (acc: int) = (1) for q < b do in (acc * 2)
        in (p)
  let (divisor: f32) = f32(pow2[num_bits])
  -- Sobol direction vectors, one row of num_bits per dimension.
  let (num_dims: int) = num_dates * num_und
  let (dir_vs: [num_dims][num_bits]int) = kernel d < num_dims do
        let (row: [num_bits]int) = kernel b < num_bits do
              let (z: int) = (seed * 1000003 + d * 10007 + b * 101 + 12345) * 2862933555777941757 + 3037000493
              let (h: int) = abs((z / 1024) % 1073741824)
              let (m: int) = (2 * h + 1) % pow2[b + 1]
              in (m * pow2[num_bits - 1 - b])
        in (row)
  -- The Brownian bridge's construction order, FinPar's bisection: date n
  -- first, then, depth first and left before right, the midpoint
  -- m = (a + c) / 2 of every gap between dates a and c (date 0 is the
  -- start, where the path is 0) that still has a date inside. An explicit
  -- stack of gaps (starts psa, ends psb; psp entries, the top one next)
  -- replaces the recursion: point s + 1 pops a gap, fills its midpoint and
  -- pushes the right half, then the left half, each only if it has a date
  -- inside.
  -- The gaps on the stack hold the dates not yet filled, so psp < num_dates.
  -- A kernel of one work-item runs the loop on the device (on the host,
  -- every step would read the stack's top back from the device).
  -- Indices are 1-based, 0 for none (the left neighbour of a gap from 0).
  let (bbs_bi: [1][num_dates]int) (bbs_li: [1][num_dates]int) (bbs_ri: [1][num_dates]int) =
        kernel q < 1 do
          let (bi0: [num_dates]int) = replicate num_dates 0
          let (bi1: [num_dates]int) = bi0 with [0] = num_dates
          let (li0: [num_dates]int) = replicate num_dates 0
          let (ri0: [num_dates]int) = replicate num_dates 0
          let (sa0: [num_dates]int) = replicate num_dates 0
          let (sb0: [num_dates]int) = replicate num_dates 0
          let (sb1: [num_dates]int) = sb0 with [0] = num_dates
          let (bb_bi1: [num_dates]int) (bb_li1: [num_dates]int) (bb_ri1: [num_dates]int)
              (stk_a: [num_dates]int) (stk_b: [num_dates]int) (stk_n: int) =
                loop (pbi: [num_dates]int) (pli: [num_dates]int) (pri: [num_dates]int)
                     (psa: [num_dates]int) (psb: [num_dates]int) (psp: int) =
                     (bi1, li0, ri0, sa0, sb1, 1) for s < num_dates - 1 do
                  let (top: int) = psp - 1
                  let (ga: int) = psa[top]
                  let (gc: int) = psb[top]
                  let (gm: int) = (ga + gc) / 2
                  let (nbi: [num_dates]int) = pbi with [s + 1] = gm
                  let (nli: [num_dates]int) = pli with [s + 1] = ga
                  let (nri: [num_dates]int) = pri with [s + 1] = gc
                  let (hr: int) = if 2 <= gc - gm then in (1) else in (0)
                  let (hl: int) = if 2 <= gm - ga then in (1) else in (0)
                  let (sa1: [num_dates]int) = psa with [top] = gm
                  let (sb2: [num_dates]int) = psb with [top] = gc
                  let (sa2: [num_dates]int) = sa1 with [top + hr] = ga
                  let (sb3: [num_dates]int) = sb2 with [top + hr] = gm
                  in (nbi, nli, nri, sa2, sb3, top + hr + hl)
          in (bb_bi1, bb_li1, bb_ri1)
  let (bb_bi: [num_dates]int) = bbs_bi[0]
  let (bb_li: [num_dates]int) = bbs_li[0]
  let (bb_ri: [num_dates]int) = bbs_ri[0]
  -- The bridge's weights, date k at time t_k = k (t_0 = 0): the first
  -- point is the path at t_n, sd = sqrt(t_n); point m between a and c is
  -- lw * x_a + rw * x_c + sd * z with lw = (t_c - t_m) / (t_c - t_a),
  -- rw = (t_m - t_a) / (t_c - t_a), sd = sqrt((t_m - t_a)(t_c - t_m) / (t_c - t_a)).
  let (bb_sd: [num_dates]f32) (bb_lw: [num_dates]f32) (bb_rw: [num_dates]f32) =
        kernel i < num_dates do
          let (ta: f32) = f32(bb_li[i])
          let (tc: f32) = f32(bb_ri[i])
          let (tm: f32) = f32(bb_bi[i])
          let (s: f32) (lw: f32) (rw: f32) =
                if i == 0 then in (sqrt(tm), 0.0f32, 0.0f32)
                else in (sqrt((tm - ta) * (tc - tm) / (tc - ta)), (tc - tm) / (tc - ta), (tm - ta) / (tc - ta))
          in (s, lw, rw)
  let (inv_it: f32) = f32(num_mc_it)
  -- One row of payoffs (one per model) per Monte-Carlo iteration.
  let (payoffs: [num_mc_it][num_models]f32) = kernel it < num_mc_it do
        let (n: int) = it + 1
        -- gray code: (n / 2) XOR n
        let (gray: int) (g1: int) (g2: int) (g3: int) =
              loop (acc: int) (qa: int) (qb: int) (w: int) = (0, n / 2, n, 1) for q < 62 do
                let (bit: int) = (qa % 2 + qb % 2) % 2
                in (acc + bit * w, qa / 2, qb / 2, w * 2)
        -- The Sobol point, then the inverse normal of each coordinate.
        let (gauss: [num_dates][num_und]f32) = kernel t < num_dates do
              let (grow: [num_und]f32) = kernel u < num_und do
                    let (sel: [num_bits]int) = kernel b < num_bits do
                          let (v: int) = if (gray / pow2[b]) % 2 == 1 then in (dir_vs[t * num_und + u, b]) else in (0)
                          in (v)
                    let (x: int) = reduce (\(a: int) (c: int) ->
                          let (y: int) (y1: int) (y2: int) (y3: int) =
                                loop (acc2: int) (pa: int) (pc: int) (w2: int) = (0, a, c, 1) for q2 < num_bits do
                                  let (bit2: int) = (pa % 2 + pc % 2) % 2
                                  in (acc2 + bit2 * w2, pa / 2, pc / 2, w2 * 2)
                          in (y)) 0 sel
                    let (p: f32) = f32(x) / divisor
                    let (dp: f32) = p - 0.5
                    let (g: f32) = if (dp < 0.0 && 0.0 - dp <= 0.425) || (0.0 <= dp && dp <= 0.425) then
                          let (q: f32) = 0.180625 - dp * dp
                          let (num: f32) = q * (q * (q * (q * (q * (q * (q * 2509.0809287301226727 + 33430.575583588128105) + 67265.770927008700853) + 45921.953931549871457) + 13731.693765509461125) + 1971.5909503065514427) + 133.14166789178437745) + 3.387132872796366608
                          let (den: f32) = q * (q * (q * (q * (q * (q * (q * 5226.495278852854561 + 28729.085735721942674) + 39307.89580009271061) + 21213.794301586595867) + 5394.1960214247511077) + 687.1870074920579083) + 42.313330701600911252) + 1.0
                          in (dp * num / den)
                        else
                          let (pp: f32) = if dp < 0.0 then in (dp + 0.5) else in (0.5 - dp)
                          let (rr: f32) = sqrt(0.0 - log(pp))
                          let (xx: f32) = if rr <= 5.0 then
                                let (s: f32) = rr - 1.6
                                let (num1: f32) = s * (s * (s * (s * (s * (s * (s * 7.7454501427834140764e-4 + 0.0227238449892691845833) + 0.24178072517745061177) + 1.27045825245236838258) + 3.64784832476320460504) + 5.7694972214606914055) + 4.6303378461565452959) + 1.42343711074968357734
                                let (den1: f32) = s * (s * (s * (s * (s * (s * (s * 1.05075007164441684324e-9 + 5.475938084995344946e-4) + 0.0151986665636164571966) + 0.14810397642748007459) + 0.68976733498510000455) + 1.6763848301838038494) + 2.05319162663775882187) + 1.0
                                in (num1 / den1)
                              else
                                let (s2: f32) = rr - 5.0
                                let (num2: f32) = s2 * (s2 * (s2 * (s2 * (s2 * (s2 * (s2 * 2.01033439929228813265e-7 + 2.71155556874348757815e-5) + 0.0012426609473880784386) + 0.026532189526576123093) + 0.29656057182850489123) + 1.7848265399172913358) + 5.4637849111641143699) + 6.6579046435011037772
                                let (den2: f32) = s2 * (s2 * (s2 * (s2 * (s2 * (s2 * (s2 * 2.04426310338993978564e-5 + 1.4215117583164458887e-7) + 1.8463183175100546818e-5) + 7.868691311456132591e-4) + 0.0148753612908506148525) + 0.13692988092273580531) + 0.59983220655588793769) + 1.0
                                in (num2 / den2)
                          let (sx: f32) = if dp < 0.0 then in (0.0 - xx) else in (xx)
                          in (sx)
                    in (g)
              in (grow)
        -- The Brownian bridge, one underlying at a time, as FinPar's: the
        -- points in construction order, then the increments from the back.
        let (gaussT: [num_und][num_dates]f32) = transpose gauss
        let (bbT: [num_und][num_dates]f32) = kernel u < num_und do
              let (gz: [num_dates]f32) = gaussT[u]
              let (row0: [num_dates]f32) = replicate num_dates 0.0f32
              let (row1: [num_dates]f32) = row0 with [bb_bi[0] - 1] = bb_sd[0] * gz[0]
              let (row2: [num_dates]f32) = loop (br: [num_dates]f32) = (row1) for i0 < num_dates - 1 do
                    let (i: int) = i0 + 1
                    let (j: int) = bb_li[i] - 1
                    let (k: int) = bb_ri[i] - 1
                    let (l: int) = bb_bi[i] - 1
                    let (tmp: f32) = bb_rw[i] * br[k] + bb_sd[i] * gz[i]
                    let (v: f32) = if j == -1 then in (tmp) else in (tmp + bb_lw[i] * br[j])
                    let (br2: [num_dates]f32) = br with [l] = v
                    in (br2)
              let (row3: [num_dates]f32) = loop (bd: [num_dates]f32) = (row2) for ii0 < num_dates - 1 do
                    let (ii: int) = num_dates - 1 - ii0
                    let (bd2: [num_dates]f32) = bd with [ii] = bd[ii] - bd[ii - 1]
                    in (bd2)
              in (row3)
        let (bb: [num_dates][num_und]f32) = transpose bbT
        -- Black-Scholes and the payoff, per model.
        let (pays: [num_models]f32) = kernel md < num_models do
              -- correlated deltas: noise[t][j] = sum over k <= j of bb[t][k] * c[j][k]
              let (noisesT: [num_und][num_dates]f32) = kernel j < num_und do
                    let (ncol: [num_dates]f32) = kernel t < num_dates do
                          let (j1: int) = j + 1
                          let (prods: [j1]f32) = kernel k < j1 do in (bb[t, k] * md_cs[md, j, k])
                          let (sp: f32) = reduce (+) 0.0f32 prods
                          in (sp)
                    in (ncol)
              -- prices: starts times the running product of exp(drift + noise * vol)
              let (pricesT: [num_und][num_dates]f32) = kernel u < num_und do
                    let (es: [num_dates]f32) = kernel t < num_dates do
                          in (exp(md_drifts[md, t, u] + noisesT[u, t] * md_vols[md, t, u]))
                    let (cs: [num_dates]f32) = scan (*) 1.0f32 es
                    let (ps: [num_dates]f32) = kernel t < num_dates do in (md_sts[md, u] * cs[t])
                    in (ps)
              let (xss: [num_dates][num_und]f32) = transpose pricesT
              let (pay: f32) = if contract == 1 then
                    let (amount: f32) = (xss[0, 0] - 4000.0) * md_detvals[md, 0]
                    let (amount0: f32) = if 0.0 < amount then in (amount) else in (0.0f32)
                    in (amount0 * md_discts[md, 0])
                  else
                  let (pay2: f32) = if contract == 2 then
                    let (f0: f32) = min(min(xss[0, 0] / 3758.05, xss[0, 1] / 11840.0), xss[0, 2] / 1200.0)
                    let (f1: f32) = min(min(xss[1, 0] / 3758.05, xss[1, 1] / 11840.0), xss[1, 2] / 1200.0)
                    let (f2: f32) = min(min(xss[2, 0] / 3758.05, xss[2, 1] / 11840.0), xss[2, 2] / 1200.0)
                    let (f3: f32) = min(min(xss[3, 0] / 3758.05, xss[3, 1] / 11840.0), xss[3, 2] / 1200.0)
                    let (f4: f32) = min(min(xss[4, 0] / 3758.05, xss[4, 1] / 11840.0), xss[4, 2] / 1200.0)
                    let (date: int) (amt: f32) =
                          if 1.0 <= f0 then in (0, 1150.0f32) else
                          let (d1: int) (a1: f32) = if 1.0 <= f1 then in (1, 1300.0f32) else
                          let (d2: int) (a2: f32) = if 1.0 <= f2 then in (2, 1450.0f32) else
                          let (d3: int) (a3: f32) = if 1.0 <= f3 then in (3, 1600.0f32) else
                          let (a4: f32) = if 1.0 <= f4 then in (1750.0f32) else
                          let (a5: f32) = if 0.75 < f4 then in (1000.0f32) else in (f4 * 1000.0)
                          in (a5)
                          in (4, a4)
                          in (d3, a3)
                          in (d2, a2)
                          in (d1, a1)
                    in (amt * md_discts[md, date])
                  else
                  let (pay3: f32) = if contract == 3 then
                    let (hits: [num_dates]bool) = kernel t < num_dates do
                          in (xss[t, 0] <= 2630.6349999999998 || xss[t, 1] <= 8288.0 || xss[t, 2] <= 840.0)
                    let (cond: bool) = reduce (||) false hits
                    let (price1: f32) = 100.0f32 * md_discts[md, 0]
                    let (goto40: bool) = cond && (xss[366, 0] < 3758.05 || xss[366, 1] < 11840.0 || xss[366, 2] < 1200.0)
                    let (amount3: f32) = if goto40 then
                          in (1000.0 * min(min(xss[366, 0] / 3758.05, xss[366, 1] / 11840.0), xss[366, 2] / 1200.0))
                        else in (1000.0f32)
                    in (price1 + amount3 * md_discts[md, 1])
                  else in (0.0f32)
                  in (pay3)
                  in (pay2)
              in (pay)
        in (pays)
  -- The mean payoff per model.
  let (payT: [num_models][num_mc_it]f32) = transpose payoffs
  let (prices: [num_models]f32) = kernel md < num_models do
        let (prow: [num_mc_it]f32) = payT[md]
        let (tot: f32) = reduce (+) 0.0f32 prow
        in (tot / inv_it)
  in (prices)
