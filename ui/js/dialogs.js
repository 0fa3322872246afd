// The confirmation and help dialogs (native <dialog>: focus is trapped and Esc closes).

import { replaceChildren } from './dom.js';

/**
 * Asks for confirmation. `tone`: how the confirming button looks: 'danger' (the default: it
 * cancels, denies, deletes) or 'primary' (it lets something go ahead, as approving does). The
 * safe button has the focus either way (Enter goes back); Tab reaches the other.
 * @param {{title: string, body: (string|Node)[], confirmLabel?: string, cancelLabel?: string, tone?: 'danger'|'primary'}} o
 * @returns {Promise<boolean>}
 */
export function confirmDialog(o) {
  const dialog = document.getElementById('confirm-dialog');
  const yes = document.getElementById('confirm-yes');
  const no = document.getElementById('confirm-no');
  document.getElementById('confirm-title').textContent = o.title;
  replaceChildren(document.getElementById('confirm-body'), ...o.body);
  yes.textContent = o.confirmLabel || 'Confirm';
  yes.className = `btn ${o.tone === 'primary' ? 'btn-primary' : 'btn-danger'}`;
  yes.disabled = false;
  no.textContent = o.cancelLabel || 'Back';
  const opener = document.activeElement;
  return new Promise((resolve) => {
    let answer = false;
    const finish = () => {
      yes.removeEventListener('click', onYes);
      no.removeEventListener('click', onNo);
      dialog.removeEventListener('close', onClose);
      if (opener && opener instanceof HTMLElement && opener.isConnected) opener.focus();
      resolve(answer);
    };
    const onYes = () => {
      answer = true;
      dialog.close();
    };
    const onNo = () => dialog.close();
    const onClose = () => finish();
    yes.addEventListener('click', onYes);
    no.addEventListener('click', onNo);
    dialog.addEventListener('close', onClose);
    dialog.showModal();
    no.focus(); // the safe choice has focus: Enter does not cancel work by accident
  });
}

/**
 * Changes the open confirmation as what it asks about changes (a call in its list decided
 * elsewhere): its title, its confirming button's label, and whether that button can be used.
 */
export function updateConfirm({ title, confirmLabel, disabled = false }) {
  if (!document.getElementById('confirm-dialog').open) return;
  const yes = document.getElementById('confirm-yes');
  if (title !== undefined) document.getElementById('confirm-title').textContent = title;
  if (confirmLabel !== undefined) yes.textContent = confirmLabel;
  yes.disabled = disabled;
}

export function openHelp() {
  const dialog = document.getElementById('help-dialog');
  if (dialog.open) return;
  dialog.showModal();
  // Close takes the focus (Enter or Escape closes), but the list reads from its top: focusing
  // the button at its end would scroll the general keys out of view in a short window.
  document.getElementById('help-close').focus({ preventScroll: true });
  dialog.scrollTop = 0;
}

export function initHelp() {
  const dialog = document.getElementById('help-dialog');
  document.getElementById('help-close').addEventListener('click', () => dialog.close());
  dialog.addEventListener('click', (e) => {
    if (e.target === dialog) dialog.close(); // a click on the backdrop
  });
}

/** True while a modal dialog is open (page shortcuts pause). */
export function dialogOpen() {
  return !!document.querySelector('dialog[open]');
}
