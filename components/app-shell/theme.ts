export const THEME_STORAGE_KEY = "countersign-theme";

/** Set before the first paint (see the root layout), so a dark-theme reviewer never sees a flash. */
export const THEME_BOOT_SCRIPT = `try{var t=localStorage.getItem("${THEME_STORAGE_KEY}");if(t==="light"||t==="dark")document.documentElement.dataset.theme=t}catch(e){}`;
