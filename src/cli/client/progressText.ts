/**
 * The size part of `herald contacts import`'s progress bar: bytes sent of the file's size, in the
 * unit that suits the size (B, KB, MB, GB; 1 KB = 1024 bytes), so that a small file reads
 * "12.0/41.3 KB" rather than "0.0/0.0 MB".
 */
const UNITS = [
  { unit: "GB", bytes: 1024 ** 3, digits: 2 },
  { unit: "MB", bytes: 1024 ** 2, digits: 1 },
  { unit: "KB", bytes: 1024, digits: 1 }
] as const

export const progressSizes = (sent: number, total: number): string => {
  const scale = UNITS.find((u) => total >= u.bytes)
  if (scale === undefined) return `${Math.round(sent)}/${Math.round(total)} B`
  const at = (bytes: number) => (bytes / scale.bytes).toFixed(scale.digits)
  return `${at(sent)}/${at(total)} ${scale.unit}`
}
