/**
 * What export tells the person running it. Standard output holds only the orgs.yaml (or the patch);
 * warnings and the closing lines go to standard error.
 */
import { quoteYamlString } from '../../config-writer/format-yaml-string.js';
import type { ExportedOrganisation, LeftOutOrganisation } from '../../config-writer/select-exportable.js';
import type { OutputStream } from '../../cli-io.js';
import { terminalSafe } from '../../text/ansi.js';
import { formatWait } from '../../text/format-wait.js';
import type { ClientEvent } from '../../api/connect/open-client.js';
import type { EventSink } from '../../model/event-sink.js';

/** What the client tells reaches the view as events from Connect on: it shows the waits. */
export interface ExportView extends EventSink<ClientEvent> {
  /** The document itself (a new orgs.yaml, a file updated but not written, or a patch). */
  document(text: string): void;
  /** An organisation of the service that the document cannot hold. */
  organisationLeftOut(org: LeftOutOrganisation): void;
  /** A field of an exported organisation that the document cannot hold. */
  fieldLeftOut(org: ExportedOrganisation, note: string): void;
  /** Something an update in place could not carry over as it was. */
  warn(warning: string): void;
  /** A new orgs.yaml was written to --out. */
  exported(summary: { count: number; activeSlug: string | null; leftOut: number; shown: string }): void;
  /** The closing lines of an update in place. */
  updated(lines: readonly string[]): void;
}

export function createExportView(out: OutputStream, err: OutputStream): ExportView {
  return {
    document(text) {
      out.write(text);
    },
    organisationLeftOut(org) {
      err.write(`Warning: ${terminalSafe(`left out organisation ${quoteYamlString(org.slug)} (id ${quoteYamlString(org.id)}): ${org.reason}`)}.\n`);
    },
    fieldLeftOut(org, note) {
      err.write(`Warning: ${terminalSafe(`organisation ${quoteYamlString(org.slug)}: left out ${note}`)}.\n`);
    },
    warn(warning) {
      err.write(`Warning: ${terminalSafe(warning)}.\n`);
    },
    exported({ count, activeSlug, leftOut, shown }) {
      const active = activeSlug === null ? '' : ` (active: ${terminalSafe(activeSlug)})`;
      const left = leftOut === 0 ? '' : `; ${leftOut} left out, see the warnings above`;
      err.write(`Exported ${count} organisation${count === 1 ? '' : 's'}${active} to ${shown}${left}. Check it with: orgform plan -f ${shown}\n`);
    },
    updated(lines) {
      for (const line of lines) err.write(`${line}\n`);
    },
    event(event) {
      // A wait of 2 s (the service, its rate limit, the token command).
      if (event.type === 'wait') err.write(`${formatWait(event)}\n`);
    },
  };
}
