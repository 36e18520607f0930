import { TIME_ZONE_COOKIE } from "@/lib/time/constants";

export const THEME_STORAGE_KEY = "countersign-theme";

/**
 * Set before the first paint (see the root layout), so a dark-theme reviewer never sees a flash.
 * It also tells the server the browser's time zone, in a cookie (lib/time/zone.ts), so the next
 * page is rendered in it.
 */
export const THEME_BOOT_SCRIPT = `try{var t=localStorage.getItem("${THEME_STORAGE_KEY}");if(t==="light"||t==="dark")document.documentElement.dataset.theme=t}catch(e){}try{document.cookie="${TIME_ZONE_COOKIE}="+encodeURIComponent(Intl.DateTimeFormat().resolvedOptions().timeZone)+";path=/;max-age=31536000;samesite=lax"}catch(e){}`;
