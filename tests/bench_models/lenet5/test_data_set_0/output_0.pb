
BlogitsJ(z°k½ú½r¾5‚>œvî<ø)w½czš½t¼„l¾üæ¦;.(€¾