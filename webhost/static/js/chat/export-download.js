// @ts-check
// A conversation's export (contract §8.1, [data-action="export"]): the backend writes the file's text
// (`chat/export`, the branch shown), the page hands it to the browser as a download.

/**
 * @param {(method: string, params: Record<string, unknown>) => Promise<any>} request
 * @param {string} conversationId
 * @param {string} format "md" or "json"
 */
export async function downloadExport(request, conversationId, format) {
  const file = await request("chat/export", { conversationId, format });
  const url = URL.createObjectURL(new Blob([String(file.text)], { type: String(file.mediaType) }));
  const link = document.createElement("a");
  link.href = url;
  link.download = String(file.filename);
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);  // once the browser surely has read it (it reads it after the click)
}
