/** One problem with the input, shown as `FILE:LINE:COL: message`: what the loader reports, errors carry and views place. */
export interface ConfigProblem {
  file: string;
  line: number;
  col: number;
  message: string;
}
