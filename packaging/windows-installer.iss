; Inno Setup script for the Windows installer (.github/workflows/release.yml builds it on windows-latest).
; Build the one-folder bundle first (python -m PyInstaller packaging/trinity.spec), then
;   iscc /DAppVersion=<version> packaging\windows-installer.iss      -> dist\TrinityDesktop-<version>-setup.exe
; (the version comes from its one home: python packaging/version.py).
; Installs dist\trinity-desktop\ (trinity-desktop.exe, windowed, and trinity-desktop-cli.exe, its console twin
; for the command line), a Start-menu entry, an uninstaller, and associates *.trinity.json with the app, so a
; double-clicked session or talk deck opens in it (the path arrives as the first command-line argument).
; Silent install / uninstall: TrinityDesktop-<version>-setup.exe /VERYSILENT, then unins000.exe /VERYSILENT.
#define AppName "Trinity Desktop"
#ifndef AppVersion
  #error Pass the version: iscc /DAppVersion=<version> (python packaging/version.py prints it)
#endif

[Setup]
AppId={{6E7D1B0C-5B8B-4E4F-9F7A-2B7D3C1A9E10}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=Trinity Desktop developers
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
UninstallDisplayIcon={app}\trinity-desktop.exe
SetupIconFile=..\build\pyinstaller\icons\trinity-desktop.ico
OutputDir=..\dist
OutputBaseFilename=TrinityDesktop-{#AppVersion}-setup
ChangesAssociations=yes
Compression=lzma2/max
SolidCompression=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
PrivilegesRequiredOverridesAllowed=commandline dialog
WizardStyle=modern

[Files]
Source: "..\dist\trinity-desktop\*"; DestDir: "{app}"; Flags: recursesubdirs ignoreversion createallsubdirs

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\trinity-desktop.exe"; Comment: "Compute, bandwidth and memory of AI workloads"
Name: "{group}\Uninstall {#AppName}"; Filename: "{uninstallexe}"

[Registry]
Root: HKA; Subkey: "Software\Classes\.trinity.json"; ValueType: string; ValueName: ""; ValueData: "TrinityDesktop.Session"; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\TrinityDesktop.Session"; ValueType: string; ValueName: ""; ValueData: "Trinity Desktop session"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\TrinityDesktop.Session\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\trinity-desktop.exe,0"
Root: HKA; Subkey: "Software\Classes\TrinityDesktop.Session\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\trinity-desktop.exe"" ""%1"""

[UninstallDelete]
; Python writes nothing into {app}; this removes the folder itself once the files are gone.
Type: dirifempty; Name: "{app}"
