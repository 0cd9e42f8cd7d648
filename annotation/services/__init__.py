"""Write operations on studies (HackSoft style: views, API, commands and tasks all call these)."""
