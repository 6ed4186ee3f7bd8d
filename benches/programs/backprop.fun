-- Backprop (Rodinia): one training step of a neural network with n_in
-- inputs, 16 hidden units and 1 output, after the structure of the Futhark
-- benchmark (rodinia/backprop). The weights and the inputs are Sobol
-- numbers (Gray-code order, from the direction vectors given as input);
-- the target is 0.1 and the previous weights are zero. The step: the
-- forward pass of each layer (a 2-D map of products over the transposed
-- weights, a sum per row, then the sigmoid), the output and hidden errors
-- (sums of absolute deltas), and the weight adjustment of both layers
-- (2-D maps). The results are the two errors and both adjusted weight
-- matrices, each with its bias column put back in front.
--
-- What differs from the Futhark version:
-- - FUN has no bitwise operators: bit i of the Gray code of n is
--   (n / 2^i + n / 2^(i+1)) % 2, and the direction vectors it selects are
--   added instead of XORed. That is the same number when the direction
--   vectors are distinct powers of two, as in Rodinia's dataset (Sobol's
--   first dimension, 2^29 down to 1, used by every case below); other
--   direction vectors would give other weights.
-- - No functions: the Sobol number (five times), the forward pass (twice)
--   and the weight adjustment (twice) are written out where they are used.
-- - n_in and the number of direction vectors are i64 inputs (sizes); the
--   pairs of results of Futhark's maps are separate kernels or arrays.
--
-- Datasets: two small networks (CI); the `compiled input` is Table 4's
-- Backprop with 2^20 inputs.
-- ==
-- input { 4i64 30i64
--         [536870912i32, 268435456i32, 134217728i32, 67108864i32, 33554432i32,
--          16777216i32, 8388608i32, 4194304i32, 2097152i32, 1048576i32,
--          524288i32, 262144i32, 131072i32, 65536i32, 32768i32, 16384i32,
--          8192i32, 4096i32, 2048i32, 1024i32, 512i32, 256i32, 128i32, 64i32,
--          32i32, 16i32, 8i32, 4i32, 2i32, 1i32] }
-- output { 0.0009170519f32 0.0010604756f32
--          [[0.5f32, 0.7499784f32, 0.24998422f32, 0.37497136f32, 0.87499803f32, 0.62497735f32, 0.12498686f32, 0.18746734f32, 0.6874953f32,
--            0.9374783f32, 0.4374816f32, 0.3124624f32, 0.8124956f32, 0.56247026f32, 0.06248262f32, 0.09370879f32, 0.59374344f32],
--           [0.84375f32, 0.34373632f32, 0.46874002f32, 0.9687319f32, 0.71874875f32, 0.21873568f32, 0.15624169f32, 0.6562293f32, 0.906247f32,
--            0.40623626f32, 0.28123835f32, 0.7812262f32, 0.5312472f32, 0.031231167f32, 0.046864003f32, 0.54684895f32, 0.7968708f32],
--           [0.296875f32, 0.42185593f32, 0.92186105f32, 0.6718497f32, 0.17187329f32, 0.23435502f32, 0.7343634f32, 0.98434615f32, 0.48437083f32,
--            0.35935584f32, 0.8593587f32, 0.6093418f32, 0.10937112f32, 0.07809872f32, 0.5781097f32, 0.82808864f32, 0.32811922f32],
--           [0.453125f32, 0.9531167f32, 0.703119f32, 0.20311403f32, 0.14062425f32, 0.64061636f32, 0.89062f32, 0.39061248f32, 0.26562318f32,
--            0.7656167f32, 0.51561797f32, 0.0156106055f32, 0.023435816f32, 0.5234261f32, 0.7734308f32, 0.27342173f32, 0.398435f32],
--           [0.8984375f32, 0.64843196f32, 0.14843343f32, 0.21093011f32, 0.710937f32, 0.96093166f32, 0.4609341f32, 0.33592907f32, 0.8359363f32,
--            0.5859319f32, 0.085932754f32, 0.11717781f32, 0.61718637f32, 0.8671798f32, 0.36718303f32, 0.4921769f32, 0.99218583f32]]
--          [[0.7421875f32, 0.24191238f32], [0.1796875f32, 0.6794491f32], [0.9296875f32, 0.42945606f32],
--           [0.3046875f32, 0.8044544f32], [0.5546875f32, 0.05445421f32], [0.0390625f32, 0.5388391f32],
--           [0.7890625f32, 0.28884482f32], [0.4140625f32, 0.9138296f32], [0.6640625f32, 0.16382001f32],
--           [0.2265625f32, 0.72632146f32], [0.9765625f32, 0.47633386f32], [0.3515625f32, 0.8513426f32],
--           [0.6015625f32, 0.101341225f32], [0.0703125f32, 0.5701074f32], [0.8203125f32, 0.32011175f32],
--           [0.4453125f32, 0.9450917f32], [0.6953125f32, 0.19507654f32]] }
-- input { 9i64 30i64
--         [536870912i32, 268435456i32, 134217728i32, 67108864i32, 33554432i32,
--          16777216i32, 8388608i32, 4194304i32, 2097152i32, 1048576i32,
--          524288i32, 262144i32, 131072i32, 65536i32, 32768i32, 16384i32,
--          8192i32, 4096i32, 2048i32, 1024i32, 512i32, 256i32, 128i32, 64i32,
--          32i32, 16i32, 8i32, 4i32, 2i32, 1i32] }
-- output { 0.00034706312f32 0.00013746649f32
--          [[0.5f32, 0.74999785f32, 0.24999921f32, 0.37499666f32, 0.8749992f32, 0.6249963f32, 0.12499778f32, 0.18749243f32, 0.68749917f32,
--            0.9374976f32, 0.4374998f32, 0.3124962f32, 0.8124992f32, 0.5624966f32, 0.062497508f32, 0.09374379f32, 0.5937493f32],
--           [0.84375f32, 0.34374875f32, 0.46874955f32, 0.96874803f32, 0.7187495f32, 0.21874785f32, 0.1562487f32, 0.6562456f32, 0.9062495f32,
--            0.40624863f32, 0.28124988f32, 0.7812478f32, 0.5312496f32, 0.031248035f32, 0.04687355f32, 0.54687136f32, 0.7968746f32],
--           [0.296875f32, 0.42187482f32, 0.92187494f32, 0.6718747f32, 0.17187494f32, 0.2343747f32, 0.7343748f32, 0.9843744f32, 0.48437494f32,
--            0.3593748f32, 0.859375f32, 0.6093747f32, 0.10937494f32, 0.078124724f32, 0.5781248f32, 0.82812446f32, 0.32812494f32],
--           [0.453125f32, 0.95312476f32, 0.70312494f32, 0.20312463f32, 0.14062491f32, 0.6406246f32, 0.89062476f32, 0.39062414f32, 0.2656249f32,
--            0.7656247f32, 0.515625f32, 0.01562457f32, 0.023437416f32, 0.52343714f32, 0.7734372f32, 0.27343678f32, 0.3984374f32],
--           [0.8984375f32, 0.6484362f32, 0.14843702f32, 0.21093544f32, 0.710937f32, 0.96093524f32, 0.46093613f32, 0.33593285f32, 0.835937f32,
--            0.58593607f32, 0.08593737f32, 0.11718517f32, 0.617187f32, 0.8671854f32, 0.36718598f32, 0.4921837f32, 0.9921871f32],
--           [0.7421875f32, 0.24218565f32, 0.17968681f32, 0.6796846f32, 0.9296868f32, 0.42968434f32, 0.3046856f32, 0.80468094f32, 0.5546868f32,
--            0.054685444f32, 0.039062325f32, 0.5390592f32, 0.78906184f32, 0.28905958f32, 0.41406035f32, 0.91405714f32, 0.6640619f32],
--           [0.1640625f32, 0.22656173f32, 0.7265622f32, 0.9765613f32, 0.4765622f32, 0.35156116f32, 0.85156167f32, 0.60155976f32, 0.1015622f32,
--            0.070311636f32, 0.57031244f32, 0.8203111f32, 0.32031223f32, 0.44531128f32, 0.9453116f32, 0.69531024f32, 0.19531225f32],
--           [0.1328125f32, 0.6328114f32, 0.88281214f32, 0.38281086f32, 0.2578121f32, 0.7578107f32, 0.5078114f32, 0.0078088054f32, 0.011718354f32,
--            0.51171756f32, 0.76171863f32, 0.2617169f32, 0.3867184f32, 0.8867171f32, 0.63671756f32, 0.13671573f32, 0.1992184f32],
--           [0.69921875f32, 0.9492166f32, 0.44921798f32, 0.32421544f32, 0.824218f32, 0.5742151f32, 0.07421655f32, 0.10546127f32, 0.605468f32,
--            0.8554664f32, 0.35546854f32, 0.480465f32, 0.98046803f32, 0.7304654f32, 0.23046629f32, 0.16796261f32, 0.6679681f32],
--           [0.91796875f32, 0.41796717f32, 0.29296815f32, 0.7929663f32, 0.54296815f32, 0.042966038f32, 0.05859211f32, 0.55858815f32, 0.80859315f32,
--            0.308592f32, 0.4335936f32, 0.93359095f32, 0.6835932f32, 0.18359126f32, 0.24609192f32, 0.74608916f32, 0.9960932f32]]
--          [[0.49609375f32, 0.37098962f32], [0.87109375f32, 0.6209932f32], [0.12109375f32, 0.0897493f32],
--           [0.58984375f32, 0.8397438f32], [0.33984375f32, 0.46474138f32], [0.96484375f32, 0.71474504f32],
--           [0.21484375f32, 0.15225717f32], [0.65234375f32, 0.9022488f32], [0.40234375f32, 0.27724263f32],
--           [0.77734375f32, 0.5272444f32], [0.02734375f32, 0.019438827f32], [0.51953125f32, 0.7694323f32],
--           [0.26953125f32, 0.39442906f32], [0.89453125f32, 0.64443266f32], [0.14453125f32, 0.20694102f32],
--           [0.70703125f32, 0.9569341f32], [0.45703125f32, 0.33192924f32]] }
-- compiled input { 1048576i64 30i64
--         [536870912i32, 268435456i32, 134217728i32, 67108864i32, 33554432i32,
--          16777216i32, 8388608i32, 4194304i32, 2097152i32, 1048576i32,
--          524288i32, 262144i32, 131072i32, 65536i32, 32768i32, 16384i32,
--          8192i32, 4096i32, 2048i32, 1024i32, 512i32, 256i32, 128i32, 64i32,
--          32i32, 16i32, 8i32, 4i32, 2i32, 1i32] }
def main (n_in: int) (num_bits: int) (dirvct: [num_bits]i32) =
  let (nh: int) = 16
  let (no: int) = 1
  let (ni1: int) = n_in + 1
  let (nh1: int) = nh + 1
  let (no1: int) = no + 1
  let (eta: f32) = 0.3
  let (momentum: f32) = 0.3
  -- Sobol numbers are scaled by 1 / (2^num_bits + 1).
  let (pow: int) = loop (a: int) = (1) for b < num_bits do
      in (a * 2)
  let (norm: f32) = 1.0 / (f32(pow) + 1.0)
  -- Input weights (ni1 rows of nh) and their first column, from offset 1.
  let (iw: [ni1][nh]f32) = kernel i < ni1 do
      let (row: [nh]f32) = kernel j < nh do
          let (sn: int) = i * nh1 + 2 + j
          let (r: int) (q: int) = loop (acc: int) (p: int) = (0, 1) for b < num_bits do
              let (g: int) = (sn / p + sn / (2 * p)) % 2
              in (acc + g * i64(dirvct[b]), p * 2)
          in (f32(r) * norm)
      in (row)
  let (iwcol: [ni1]f32) = kernel i < ni1 do
      let (sn: int) = 1 + i * nh1
      let (r: int) (q: int) = loop (acc: int) (p: int) = (0, 1) for b < num_bits do
          let (g: int) = (sn / p + sn / (2 * p)) % 2
          in (acc + g * i64(dirvct[b]), p * 2)
      in (f32(r) * norm)
  -- Hidden weights (nh1 rows of no) and their first column.
  let (off2: int) = 1 + ni1 * nh1
  let (hw: [nh1][no]f32) = kernel i < nh1 do
      let (row: [no]f32) = kernel j < no do
          let (sn: int) = i * no1 + off2 + 1 + j
          let (r: int) (q: int) = loop (acc: int) (p: int) = (0, 1) for b < num_bits do
              let (g: int) = (sn / p + sn / (2 * p)) % 2
              in (acc + g * i64(dirvct[b]), p * 2)
          in (f32(r) * norm)
      in (row)
  let (hwcol: [nh1]f32) = kernel i < nh1 do
      let (sn: int) = off2 + i * no1
      let (r: int) (q: int) = loop (acc: int) (p: int) = (0, 1) for b < num_bits do
          let (g: int) = (sn / p + sn / (2 * p)) % 2
          in (acc + g * i64(dirvct[b]), p * 2)
      in (f32(r) * norm)
  -- The inputs, the target and the (zero) previous weights.
  let (off3: int) = off2 + nh1 * no1
  let (units: [n_in]f32) = kernel k < n_in do
      let (sn: int) = k + off3 + 1
      let (r: int) (q: int) = loop (acc: int) (p: int) = (0, 1) for b < num_bits do
          let (g: int) = (sn / p + sn / (2 * p)) % 2
          in (acc + g * i64(dirvct[b]), p * 2)
      in (f32(r) * norm)
  let (target: [no]f32) = replicate no 0.1f32
  let (zh: [nh]f32) = replicate nh 0.0f32
  let (iwprev: [ni1][nh]f32) = replicate ni1 zh
  let (zo: [no]f32) = replicate no 0.0f32
  let (hwprev: [nh1][no]f32) = replicate nh1 zo
  -- Forward pass, input layer to hidden layer: row 0 of iw is the bias.
  let (iconn: [n_in][nh]f32) = iw[1:n_in, 0:nh]
  let (iconnt: [nh][n_in]f32) = transpose iconn
  let (iprods: [nh][n_in]f32) = kernel j < nh do
      let (prow: [n_in]f32) = kernel k < n_in do
          in (iconnt[j, k] * units[k])
      in (prow)
  let (isums: [nh]f32) = kernel j < nh do
      let (pr: [n_in]f32) = iprods[j]
      let (s: f32) = reduce (+) 0 pr
      in (s)
  let (hidden: [nh]f32) = kernel j < nh do
      let (x: f32) = isums[j] + iw[0, j]
      in (1.0 / (1.0 + exp(-x)))
  -- Forward pass, hidden layer to output layer.
  let (hconn: [nh][no]f32) = hw[1:nh, 0:no]
  let (hconnt: [no][nh]f32) = transpose hconn
  let (hprods: [no][nh]f32) = kernel j < no do
      let (prow: [nh]f32) = kernel k < nh do
          in (hconnt[j, k] * hidden[k])
      in (prow)
  let (hsums: [no]f32) = kernel j < no do
      let (pr: [nh]f32) = hprods[j]
      let (s: f32) = reduce (+) 0 pr
      in (s)
  let (output: [no]f32) = kernel j < no do
      let (x: f32) = hsums[j] + hw[0, j]
      in (1.0 / (1.0 + exp(-x)))
  -- Output error.
  let (odelta: [no]f32) = kernel k < no do
      let (o: f32) = output[k]
      in (o * (1.0 - o) * (target[k] - o))
  let (oerrs: [no]f32) = kernel k < no do
      in (abs(odelta[k]))
  let (out_err: f32) = reduce (+) 0 oerrs
  -- Hidden error, through the hidden weights without their bias row.
  let (hdelta: [nh]f32) = kernel j < nh do
      let (ps: [no]f32) = kernel k < no do
          in (odelta[k] * hconn[j, k])
      let (sumrow: f32) = reduce (+) 0 ps
      let (h: f32) = hidden[j]
      in (h * (1.0 - h) * sumrow)
  let (herrs: [nh]f32) = kernel j < nh do
      in (abs(hdelta[j]))
  let (hid_err: f32) = reduce (+) 0 herrs
  -- Weight adjustment of the hidden layer: row 0 is scaled by 1 (the bias).
  let (hw2: [nh1][no]f32) = kernel k < nh1 do
      let (lyk: f32) = if k < 1 then
          in (1.0f32)
        else
          let (y: f32) = hidden[k - 1]
          in (y)
      let (wrow: [no]f32) = kernel j < no do
          let (dw: f32) = eta * odelta[j] * lyk + momentum * hwprev[k, j]
          in (hw[k, j] + dw)
      in (wrow)
  -- Weight adjustment of the input layer.
  let (iw2: [ni1][nh]f32) = kernel k < ni1 do
      let (lyk: f32) = if k < 1 then
          in (1.0f32)
        else
          let (y: f32) = units[k - 1]
          in (y)
      let (wrow: [nh]f32) = kernel j < nh do
          let (dw: f32) = eta * hdelta[j] * lyk + momentum * iwprev[k, j]
          in (iw[k, j] + dw)
      in (wrow)
  -- The first columns put back in front.
  let (iwout: [ni1][nh1]f32) = kernel i < ni1 do
      let (orow: [nh1]f32) = kernel k < nh1 do
          let (v: f32) = if k < 1 then
              let (c: f32) = iwcol[i]
              in (c)
            else
              let (w: f32) = iw2[i, k - 1]
              in (w)
          in (v)
      in (orow)
  let (hwout: [nh1][no1]f32) = kernel i < nh1 do
      let (orow: [no1]f32) = kernel k < no1 do
          let (v: f32) = if k < 1 then
              let (c: f32) = hwcol[i]
              in (c)
            else
              let (w: f32) = hw2[i, k - 1]
              in (w)
          in (v)
      in (orow)
  in (out_err, hid_err, iwout, hwout)
